// Package probegate holds the repository-root files the probegate binary needs at run time.
package probegate

import "embed"

// KindConfig is kind-config.yaml, the kind cluster configuration `probegate cluster create` uses.
//
//go:embed kind-config.yaml
var KindConfig []byte

// GoMod is the module's go.mod; the recipe's own go.mod copies its go line (internal/cluster).
//
//go:embed go.mod
var GoMod []byte

// GoSum is the module's go.sum: with GoMod it lets an installed binary build the bundled target.
//
//go:embed go.sum
var GoSum []byte

// Fixture holds the bundled target's source (fixtures/target), the in-cluster agent's source
// (cmd/probegate-agent, load and node modes, and the packages it builds from) and the Dockerfiles of the images the
// cluster runs (fixtures/images), at their repository paths: hack/images.sh builds them from the
// recipe an installed binary writes, as from a checkout.
//
//go:embed fixtures/target fixtures/images cmd/probegate-agent loadgen internal/timeline internal/nodeagent
var Fixture embed.FS
