package hack

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestFilesMatchTree checks the embedded files against hack/ in the checkout: same contents, the
// same executable bits as Executable records, and no file under an embedded directory left out
// (embed skips names starting with . or _, which node-image.sh's cache key would still hash).
func TestFilesMatchTree(t *testing.T) {
	embedded := map[string]bool{}
	err := fs.WalkDir(Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		embedded[path] = true
		want, err := fs.ReadFile(Files, path)
		if err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.FromSlash(path))
		if err != nil {
			t.Errorf("embedded %s: not in the checkout: %v", path, err)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("embedded %s differs from the checkout", path)
		}
		info, err := os.Stat(filepath.FromSlash(path))
		if err != nil {
			return err
		}
		if exec := info.Mode()&0o111 != 0; exec != Executable[path] {
			t.Errorf("%s: executable in the checkout %v, in Executable %v", path, exec, Executable[path])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for path := range Executable {
		if !embedded[path] {
			t.Errorf("Executable names %s, which is not embedded", path)
		}
	}
	for _, dir := range []string{"lib", "node", "pause", "runc-shim"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !embedded[filepath.ToSlash(path)] {
				t.Errorf("%s is in the checkout but not embedded (hidden names are skipped by go:embed)", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
