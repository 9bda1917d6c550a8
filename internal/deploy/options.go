// Package deploy installs the bundled fixture into a namespace: PostgreSQL, toxiproxy in front of it,
// and a chosen target variant, then waits until every piece is ready and reachable from the host.
// The suite, the scenarios and `probegate deploy` all come through Install.
package deploy

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/probegate/probegate/fixtures/manifests"
	"github.com/probegate/probegate/internal/cluster"
)

// Default images, built by hack/images.sh (`make images`) and loaded into kind.
const (
	DefaultTargetImage    = "probegate/target:dev"
	DefaultPostgresImage  = "probegate/postgres:dev"
	DefaultToxiproxyImage = "probegate/toxiproxy:dev"
)

// Options say what to install where. Zero values mean the defaults.
type Options struct {
	Namespace string // required
	Variant   string // target variant, a manifest in fixtures/manifests (default "good")
	Slot      int    // port slot: target NodePort 30080+slot, toxiproxy API NodePort 30474+slot
	Replicas  int32  // target replicas (default 3)

	TargetImage    string // default DefaultTargetImage
	PostgresImage  string // default DefaultPostgresImage (an upstream postgres image works where a registry is reachable)
	ToxiproxyImage string // default DefaultToxiproxyImage

	// Env overrides the target container's environment (e.g. BOOTSTRAP_DURATION for a cold start).
	Env map[string]string
	// Patch is a strategic-merge patch of the target Deployment (YAML or JSON, as `probegate tune
	// -o patch` writes it), applied after the overrides above: tune --verify's settings.
	Patch []byte

	// NoLoopback leaves the loopback URLs empty (see Request.NoLoopback).
	NoLoopback bool

	Timeout time.Duration // how long to wait for everything to be ready (default 3m)
	Log     *slog.Logger
}

func (o *Options) defaults() error {
	if o.Variant == "" {
		o.Variant = "good"
	}
	if o.Replicas == 0 {
		o.Replicas = 3
	}
	if o.TargetImage == "" {
		o.TargetImage = DefaultTargetImage
	}
	if o.PostgresImage == "" {
		o.PostgresImage = DefaultPostgresImage
	}
	if o.ToxiproxyImage == "" {
		o.ToxiproxyImage = DefaultToxiproxyImage
	}
	if o.Timeout == 0 {
		o.Timeout = 3 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Namespace == "" {
		return fmt.Errorf("namespace: required")
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if !slices.Contains(manifests.Variants(), o.Variant) {
		return fmt.Errorf("variant %q: unknown (want one of %s)", o.Variant, strings.Join(manifests.Variants(), ", "))
	}
	if o.Slot < 0 || o.Slot >= cluster.Slots {
		return fmt.Errorf("slot %d: want 0..%d", o.Slot, cluster.Slots-1)
	}
	if o.Replicas < 1 {
		return fmt.Errorf("replicas %d: want at least 1", o.Replicas)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("timeout %s: must not be negative", o.Timeout)
	}
	for k := range o.Env {
		if k == "" || k == "POD_NAME" || k == "VARIANT" {
			return fmt.Errorf("env %q: cannot be overridden (choose the variant with Variant)", k)
		}
	}
	if len(o.Patch) > 0 {
		if _, err := patchJSON(o.Patch, "Deployment", TargetName); err != nil {
			return err
		}
	}
	return nil
}

// Images lists the images Install runs for opts, for (*cluster.Cluster).LoadImages.
func Images(opts Options) []string {
	_ = opts.defaults()
	return []string{opts.PostgresImage, opts.ToxiproxyImage, opts.TargetImage}
}

// Validate reports the first bad option (after defaults), without touching any cluster.
func (o Options) Validate() error { return o.defaults() }
