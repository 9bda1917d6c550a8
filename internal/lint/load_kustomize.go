package lint

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/probegate/probegate/internal/kustomize"
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
	data, err := kustomize.Build(dir)
	if err != nil {
		inv.Problems = append(inv.Problems, &InputError{Pos: Position{File: kfile}, Msg: err.Error()})
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

// sameSourceName reports whether a rendered object named built can come from a source object named
// src: the same name, or src inside a namePrefix and/or nameSuffix.
func sameSourceName(src, built string) bool {
	return src != "" && (src == built || strings.Contains(built, src))
}

// sourceOf is the source object a rendered object came from: the same kind and name, else the
// longest source name inside the rendered one (a namePrefix or nameSuffix); nil when none is.
func sourceOf[T any](srcs []T, built T, key func(T) (kind, name string)) T {
	var best T
	bestLen := -1
	bk, bn := key(built)
	for _, s := range srcs {
		k, n := key(s)
		if k != bk || !sameSourceName(n, bn) {
			continue
		}
		if n == bn {
			return s
		}
		if len(n) > bestLen {
			best, bestLen = s, len(n)
		}
	}
	return best
}

func sourceWorkload(src *Inventory, w *Workload) *Workload {
	return sourceOf(src.Workloads, w, func(w *Workload) (string, string) { return w.Kind, w.Name })
}

func sourceService(src *Inventory, svc *Service) *Service {
	return sourceOf(src.Services, svc, func(s *Service) (string, string) { return "Service", s.Name })
}
