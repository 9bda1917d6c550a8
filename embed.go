// Package probegate holds the repository-root files the probegate binary needs at run time.
package probegate

import _ "embed"

// KindConfig is kind-config.yaml, the kind cluster configuration `probegate cluster create` uses.
//
//go:embed kind-config.yaml
var KindConfig []byte

// GoMod is the module's go.mod; the recipe's own go.mod copies its go line (internal/cluster).
//
//go:embed go.mod
var GoMod []byte
