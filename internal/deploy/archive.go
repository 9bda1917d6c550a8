package deploy

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// isArchive reports whether an image swap names an image tarball (a file) rather than a reference.
func isArchive(s string) bool {
	if !strings.HasSuffix(s, ".tar") {
		return false
	}
	st, err := os.Stat(s)
	return err == nil && st.Mode().IsRegular()
}

// archiveRef is the image reference a `docker save` tarball carries (its manifest.json's first
// RepoTags entry), which is what the pods then run.
func archiveRef(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("%s: no manifest.json: not a docker save archive", path)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		if h.Name != "manifest.json" {
			continue
		}
		var m []struct{ RepoTags []string }
		if err := json.NewDecoder(tr).Decode(&m); err != nil {
			return "", fmt.Errorf("%s: manifest.json: %w", path, err)
		}
		for _, e := range m {
			if len(e.RepoTags) > 0 {
				return e.RepoTags[0], nil
			}
		}
		return "", fmt.Errorf("%s: the archive's image has no tag (save it by name: docker save NAME:TAG)", path)
	}
}
