package lint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// InputError is bad input: a missing file, unparseable YAML, an unknown kind. It names the file
// and, when known, the line.
type InputError struct {
	Pos Position
	Msg string
}

func (e *InputError) Error() string { return e.Pos.String() + ": " + e.Msg }

// IsInputError reports whether err is (or wraps) bad input rather than a failure of lint itself.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// LoadPaths reads every manifest named by paths: files, directories (walked recursively for *.yaml
// and *.yml, hidden entries skipped) or "-" for stdin. Nothing is returned unless everything parses.
func LoadPaths(paths []string, stdin io.Reader) (*Inventory, error) {
	if len(paths) == 0 {
		return nil, &InputError{Pos: Position{File: "lint"}, Msg: "no manifest files or directories given"}
	}
	inv := &Inventory{}
	for _, p := range paths {
		if p == "-" {
			if stdin == nil {
				return nil, &InputError{Pos: Position{File: "<stdin>"}, Msg: "no standard input to read"}
			}
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, &InputError{Pos: Position{File: "<stdin>"}, Msg: fmt.Sprintf("read: %v", err)}
			}
			if err := parseInto(inv, "<stdin>", data); err != nil {
				return nil, err
			}
			continue
		}
		files, err := manifestFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, &InputError{Pos: Position{File: f}, Msg: fmt.Sprintf("read: %v", unwrapPathError(err))}
			}
			if err := parseInto(inv, f, data); err != nil {
				return nil, err
			}
		}
	}
	return inv, nil
}

// Parse reads the manifests in data, naming them file in positions.
func Parse(file string, data []byte) (*Inventory, error) {
	inv := &Inventory{}
	if err := parseInto(inv, file, data); err != nil {
		return nil, err
	}
	return inv, nil
}

// manifestFiles expands p into the manifest files it names, sorted.
func manifestFiles(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, &InputError{Pos: Position{File: p}, Msg: unwrapPathError(err).Error()}
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return &InputError{Pos: Position{File: path}, Msg: unwrapPathError(err).Error()}
		}
		if path != p && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && (strings.HasSuffix(d.Name(), ".yaml") || strings.HasSuffix(d.Name(), ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, &InputError{Pos: Position{File: p}, Msg: "directory holds no *.yaml or *.yml files"}
	}
	sort.Strings(files)
	return files, nil
}

// unwrapPathError drops the operation and path from an *fs.PathError: the caller names the file.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
