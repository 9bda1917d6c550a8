// Package probegate holds the repository-root files the probegate binary needs at run time.
package probegate

import _ "embed"

// KindConfig is kind-config.yaml, the kind cluster configuration `probegate cluster create` uses.
//
//go:embed kind-config.yaml
var KindConfig []byte
