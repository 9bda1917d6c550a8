package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizationFiles are the names kustomize looks for in a directory.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// isKustomizationFile reports whether file is named like a kustomization.
func isKustomizationFile(file string) bool {
	base := filepath.Base(file)
	for _, name := range kustomizationFiles {
		if base == name {
			return true
		}
	}
	return false
}

// kustomizationIn returns the kustomization file of directory dir, or "".
func kustomizationIn(dir string) string {
	for _, name := range kustomizationFiles {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			return p
		}
	}
	return ""
}

// loadKustomization reads directory dir, which holds kustomization file kfile, as kustomize builds
// it: the labels, selectors, namespaces, names and patches the kustomization applies are what the
// cluster gets, so they are what lint judges (commonLabels that only the kustomization adds decide
// which Services select which pods). Each rendered object keeps the position of the source document
// it came from (same kind, and its name or the name inside a prefix or suffix); one that no file
// below dir holds (a resource of another directory) is placed at the kustomization file. When
// kustomize cannot build the directory, the problem is recorded and its files are read as plain
// manifests, so what can be linted still is.
func loadKustomization(inv *Inventory, dir, kfile string) {
	data, err := renderKustomization(dir)
	if err != nil {
		inv.Problems = append(inv.Problems, &InputError{Pos: Position{File: kfile}, Msg: "kustomize build: " + err.Error()})
		loadFiles(inv, dir) // the kustomization file itself is skipped
		return
	}
	src := &Inventory{}
	loadFiles(src, dir)
	built := &Inventory{}
	parseInto(built, kfile, data)
	for _, w := range built.Workloads {
		if s := sourceWorkload(src, w); s != nil {
			w.Pos, w.doc, w.podPath = s.Pos, s.doc, s.podPath
		} else {
			w.Pos, w.doc = Position{File: kfile}, nil
		}
	}
	for _, svc := range built.Services {
		if s := sourceService(src, svc); s != nil {
			svc.Pos, svc.doc = s.Pos, s.doc
		} else {
			svc.Pos, svc.doc = Position{File: kfile}, nil
		}
	}
	for i := range built.Skipped {
		built.Skipped[i].Pos = Position{File: kfile}
		for _, s := range src.Skipped {
			if s.Kind == built.Skipped[i].Kind && sameSourceName(s.Name, built.Skipped[i].Name) {
				built.Skipped[i].Pos = s.Pos
				break
			}
		}
	}
	for _, p := range built.Problems {
		p.Pos = Position{File: kfile}
	}
	inv.Workloads = append(inv.Workloads, built.Workloads...)
	inv.Services = append(inv.Services, built.Services...)
	inv.Skipped = append(inv.Skipped, built.Skipped...)
	inv.Problems = append(inv.Problems, built.Problems...)
}

// renderKustomization runs kustomize build on dir in-process.
func renderKustomization(dir string) ([]byte, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	data, err := res.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	return data, nil
}

// sameSourceName reports whether a rendered object named built can come from a source object named
// src: the same name, or src inside a namePrefix and/or nameSuffix.
func sameSourceName(src, built string) bool {
	return src != "" && (src == built || strings.Contains(built, src))
}

func sourceWorkload(src *Inventory, w *Workload) *Workload {
	var best *Workload
	for _, s := range src.Workloads {
		if s.Kind != w.Kind || !sameSourceName(s.Name, w.Name) {
			continue
		}
		if s.Name == w.Name {
			return s
		}
		if best == nil || len(s.Name) > len(best.Name) {
			best = s
		}
	}
	return best
}

func sourceService(src *Inventory, svc *Service) *Service {
	var best *Service
	for _, s := range src.Services {
		if !sameSourceName(s.Name, svc.Name) {
			continue
		}
		if s.Name == svc.Name {
			return s
		}
		if best == nil || len(s.Name) > len(best.Name) {
			best = s
		}
	}
	return best
}
