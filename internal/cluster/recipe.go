package cluster

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/probegate/probegate"
	"github.com/probegate/probegate/hack"
)

// recipeFile is one file of the run-time recipe: a slash-separated path relative to the recipe's
// root, its permissions and its contents.
type recipeFile struct {
	Path string
	Mode fs.FileMode
	Data []byte
}

// recipeFiles returns the files `cluster create` and the image builds run, laid out as in the
// repository: hack/ (from package hack), kind-config.yaml, go.mod and go.sum (host-prep.sh and
// build-addons.sh build hack/runc-shim and hack/pause, images.sh the target), and the bundled
// target's source and image Dockerfiles under fixtures/, sorted by path.
func recipeFiles() ([]recipeFile, error) {
	files := []recipeFile{
		{Path: "kind-config.yaml", Mode: 0o644, Data: probegate.KindConfig},
		{Path: "go.mod", Mode: 0o644, Data: probegate.GoMod},
		{Path: "go.sum", Mode: 0o644, Data: probegate.GoSum},
	}
	// The postgres image's entrypoint is copied into it as it is.
	fixture, err := embedded(probegate.Fixture, "", func(p string) bool { return path.Base(p) == "pg-start" })
	if err != nil {
		return nil, fmt.Errorf("read embedded fixture files: %w", err)
	}
	scripts, err := embedded(hack.Files, "hack", func(p string) bool { return hack.Executable[p] })
	if err != nil {
		return nil, fmt.Errorf("read embedded hack files: %w", err)
	}
	files = append(append(files, fixture...), scripts...)
	slices.SortFunc(files, func(a, b recipeFile) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// embedded reads every file of fsys as a recipe file under dir, mode 0755 where executable says so.
func embedded(fsys fs.FS, dir string, executable func(string) bool) ([]recipeFile, error) {
	var out []recipeFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if executable(p) {
			mode = 0o755
		}
		out = append(out, recipeFile{Path: path.Join(dir, p), Mode: mode, Data: data})
		return nil
	})
	return out, err
}

// recipeDigest hashes the paths, modes and contents of files (sorted by path).
func recipeDigest(files []recipeFile) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", f.Path, f.Mode.Perm(), len(f.Data))
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// recipeDir returns the directory under base holding files, writing it first when it is missing or
// does not hold exactly files. The directory is named by the files' digest, so binaries with
// different recipes never share one, and every later call with the same files only checks it.
func recipeDir(base string, files []recipeFile) (string, error) {
	dir := filepath.Join(base, recipeDigest(files))
	if checkRecipe(dir, files) == nil {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("create recipe cache %s: %w", base, err)
	}
	tmp, err := os.MkdirTemp(base, "."+filepath.Base(dir)+"-")
	if err != nil {
		return "", fmt.Errorf("create recipe directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := writeRecipe(tmp, files); err != nil {
		return "", err
	}
	if err := checkRecipe(dir, files); err != nil {
		// Missing, or changed since it was written: replace it.
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("remove stale recipe %s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have written the same recipe in the meantime.
		if checkRecipe(dir, files) == nil {
			return dir, nil
		}
		return "", fmt.Errorf("install recipe %s: %w", dir, err)
	}
	return dir, nil
}

// writeRecipe writes files under dir with exact permissions (whatever the umask), directories 0755.
func writeRecipe(dir string, files []recipeFile) error {
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("write recipe: %w", err)
	}
	for _, f := range files {
		name := filepath.Join(dir, filepath.FromSlash(f.Path))
		for d := filepath.Dir(name); d != dir; d = filepath.Dir(d) {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("write recipe: %w", err)
			}
			if err := os.Chmod(d, 0o755); err != nil {
				return fmt.Errorf("write recipe: %w", err)
			}
		}
		if err := os.WriteFile(name, f.Data, f.Mode); err != nil {
			return fmt.Errorf("write recipe file %s: %w", f.Path, err)
		}
		if err := os.Chmod(name, f.Mode); err != nil {
			return fmt.Errorf("write recipe file %s: %w", f.Path, err)
		}
	}
	return nil
}

// checkRecipe fails unless dir holds exactly files: the same paths, permissions and contents, and
// nothing else, in directories of mode 0755 (node-image.sh hashes whole directories, modes included,
// into the node image's cache key).
func checkRecipe(dir string, files []recipeFile) error {
	want := make(map[string]recipeFile, len(files))
	for _, f := range files {
		want[f.Path] = f
	}
	seen := 0
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, name)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && info.Mode().Perm() != 0o755 {
				return fmt.Errorf("directory %s: mode %v, want 0755", rel, info.Mode().Perm())
			}
			return nil
		}
		f, ok := want[rel]
		if !ok {
			return fmt.Errorf("unexpected file %s", rel)
		}
		if !info.Mode().IsRegular() || info.Mode().Perm() != f.Mode {
			return fmt.Errorf("%s: mode %v, want %v", rel, info.Mode(), f.Mode)
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, f.Data) {
			return fmt.Errorf("%s: contents changed", rel)
		}
		seen++
		return nil
	})
	if err != nil {
		return fmt.Errorf("check recipe %s: %w", dir, err)
	}
	if seen != len(files) {
		return fmt.Errorf("check recipe %s: %d of %d files present", dir, seen, len(files))
	}
	return nil
}

// recipeRoot returns the tree holding hack/ and kind-config.yaml that Create runs: root when set
// (a developer's checkout), else the recipe embedded in this binary, materialised under
// CacheDir()/recipe.
func recipeRoot(root string) (string, error) {
	if root != "" {
		if _, err := os.Stat(filepath.Join(root, "hack", "node-image.sh")); err != nil {
			return "", fmt.Errorf("%s is not a probegate source tree: %w", root, err)
		}
		return root, nil
	}
	files, err := recipeFiles()
	if err != nil {
		return "", err
	}
	return recipeDir(filepath.Join(CacheDir(), "recipe"), files)
}
