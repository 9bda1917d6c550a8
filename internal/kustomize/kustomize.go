// Package kustomize builds a kustomization directory in-process, as `kubectl apply -k` would: the
// one place deploy (a user's target) and lint (manifests on disk) render kustomizations.
package kustomize

import (
	"fmt"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Build renders dir and returns the multi-document YAML.
func Build(dir string) ([]byte, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("%s: kustomize: %w", dir, err)
	}
	data, err := res.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("%s: kustomize output: %w", dir, err)
	}
	return data, nil
}
