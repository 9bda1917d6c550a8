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

// HiddenFile is the Kind of a Skipped entry for a hidden manifest file (.name.yaml) in a directory:
// not read, but counted and named in the output.
const HiddenFile = "hidden file"

// LoadPaths reads every manifest named by paths: files, directories (walked recursively for *.yaml
// and *.yml; hidden files are skipped and listed as such, hidden directories not entered; a directory with a kustomization is built with kustomize, as
// `kubectl apply -k` would) or "-" for stdin. A file or document that cannot be read is
// recorded in the inventory's Problems and the others are read regardless; the error is non-nil
// only when no path is given.
func LoadPaths(paths []string, stdin io.Reader) (*Inventory, error) {
	if len(paths) == 0 {
		return nil, &InputError{Pos: Position{File: "lint"}, Msg: "no manifest files or directories given"}
	}
	inv := &Inventory{}
	for _, p := range paths {
		if p == "-" {
			if stdin == nil {
				inv.Problems = append(inv.Problems, &InputError{Pos: Position{File: "<stdin>"}, Msg: "no standard input to read"})
				continue
			}
			data, err := io.ReadAll(stdin)
			if err != nil {
				inv.Problems = append(inv.Problems, &InputError{Pos: Position{File: "<stdin>"}, Msg: fmt.Sprintf("read: %v", err)})
				continue
			}
			parseInto(inv, "<stdin>", data)
			continue
		}
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			if kfile := kustomizationIn(p); kfile != "" {
				loadKustomization(inv, p, kfile)
				continue
			}
		}
		loadFiles(inv, p)
	}
	return inv, nil
}

// loadFiles reads the manifest files p names (a file, or a directory walked for them) into inv.
func loadFiles(inv *Inventory, p string) {
	files, hidden, err := manifestFiles(p)
	if err != nil {
		inv.Problems = append(inv.Problems, err)
		return
	}
	for _, h := range hidden {
		inv.Skipped = append(inv.Skipped, Skipped{Kind: HiddenFile, Name: filepath.Base(h), Pos: Position{File: h}})
	}
	for _, f := range files {
		if isKustomizationFile(f) {
			// kustomize's own file, not a manifest (it need not carry apiVersion and kind): a
			// directory below the one named is read as plain files, its kustomization skipped.
			inv.Skipped = append(inv.Skipped, Skipped{Kind: "Kustomization", Name: filepath.Base(filepath.Dir(f)), Pos: Position{File: f}, Unknown: true})
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			inv.Problems = append(inv.Problems, &InputError{Pos: Position{File: f}, Msg: fmt.Sprintf("read: %v", unwrapPathError(err))})
			continue
		}
		parseInto(inv, f, data)
	}
}

// Err returns the first problem reading the inventory, or nil.
func (inv *Inventory) Err() error {
	if len(inv.Problems) == 0 {
		return nil
	}
	return inv.Problems[0]
}

// Parse reads the manifests in data, naming them file in positions. The inventory holds whatever
// could be read; the error is the first problem, if any.
func Parse(file string, data []byte) (*Inventory, error) {
	inv := &Inventory{}
	parseInto(inv, file, data)
	return inv, inv.Err()
}

// manifestFiles expands p into the manifest files it names, sorted.
// Hidden files (.name.yaml) are not read but returned in hidden, so the caller can say so; hidden
// directories (.git, .github) are not entered.
func manifestFiles(p string) (files, hidden []string, _ *InputError) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, nil, &InputError{Pos: Position{File: p}, Msg: unwrapPathError(err).Error()}
	}
	if !info.IsDir() {
		return []string{p}, nil, nil
	}
	var walkErr *InputError
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			walkErr = &InputError{Pos: Position{File: path}, Msg: unwrapPathError(err).Error()}
			return walkErr
		}
		if path != p && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			if isManifestName(d.Name()) {
				hidden = append(hidden, path)
			}
			return nil
		}
		if !d.IsDir() && isManifestName(d.Name()) {
			files = append(files, path)
		}
		return nil
	})
	if walkErr != nil {
		return nil, nil, walkErr
	}
	if err != nil {
		return nil, nil, &InputError{Pos: Position{File: p}, Msg: err.Error()}
	}
	if len(files) == 0 {
		msg := "directory holds no *.yaml or *.yml files"
		if len(hidden) > 0 {
			msg += fmt.Sprintf(" but hidden ones (%s), which are skipped: name them to lint them", filepath.Base(hidden[0]))
		}
		return nil, nil, &InputError{Pos: Position{File: p}, Msg: msg}
	}
	sort.Strings(files)
	return files, hidden, nil
}

func isManifestName(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// unwrapPathError drops the operation and path from an *fs.PathError: the caller names the file.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// AddRoutingServices reads the Services in paths (files or directories, as LoadPaths reads them)
// into inv as routing context: they show which workloads serve traffic but are not linted or
// counted themselves, and the other objects in those files are ignored. A Service already in inv
// (same namespace and name) is not added twice. What cannot be read is recorded in inv.Problems.
func AddRoutingServices(inv *Inventory, paths []string) {
	if len(paths) == 0 {
		return
	}
	read, err := LoadPaths(paths, nil)
	if err != nil {
		inv.Problems = append(inv.Problems, &InputError{Pos: Position{File: "--services"}, Msg: err.Error()})
		return
	}
	inv.Problems = append(inv.Problems, read.Problems...)
	have := map[[2]string]bool{}
	for _, s := range inv.Services {
		have[[2]string{s.Namespace, s.Name}] = true
	}
	for _, s := range read.Services {
		key := [2]string{s.Namespace, s.Name}
		if have[key] {
			continue
		}
		have[key] = true
		s.routingOnly = true
		inv.RoutingServices = append(inv.RoutingServices, s)
	}
}
