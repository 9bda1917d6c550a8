package cluster

import (
	"crypto/sha256"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/probegate/probegate"
)

func mustRecipe(t *testing.T) []recipeFile {
	t.Helper()
	files, err := recipeFiles()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Each pattern captures a path the scripts source, run, build, hash or copy, and says where that
// path is relative to: hack/ or the repository root.
var scriptRefs = []struct {
	re     *regexp.Regexp
	prefix string
}{
	{regexp.MustCompile(`\$\(dirname "\$0"\)/([\w./-]+)`), "hack"},
	{regexp.MustCompile(`\$\{?HACK_DIR\}?/([\w./-]+)`), "hack"},
	{regexp.MustCompile(`\$\{?REPO_ROOT\}?/([\w./-]+)`), ""},
	{regexp.MustCompile(`\s\./hack/([\w./-]+)`), "hack"},
}

// tarList matches node-image.sh's cache key: `cd "$HACK_DIR" && tar ... -cf - NAMES...)`.
var tarList = regexp.MustCompile(`cd "\$HACK_DIR" && (tar [^)]*-cf - ([^)]*))\)`)

// scriptText is a script's text with backslash-continued lines joined.
func scriptText(data []byte) string {
	return strings.ReplaceAll(string(data), "\\\n", " ")
}

// TestRecipeHoldsEveryReferencedFile parses every embedded script for the paths it sources, runs,
// builds, hashes or copies, and checks each is in the recipe, so the binary never runs a script that
// reaches for a file it did not bring.
func TestRecipeHoldsEveryReferencedFile(t *testing.T) {
	files := mustRecipe(t)
	exists := func(p string) bool {
		if p == "." { // the root itself, as in common.sh's REPO_ROOT="$HACK_DIR/.."
			return true
		}
		for _, f := range files {
			if f.Path == p || strings.HasPrefix(f.Path, p+"/") {
				return true
			}
		}
		return false
	}
	found := map[string]bool{}
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".sh") {
			continue
		}
		text := scriptText(f.Data)
		var refs []string
		for _, r := range scriptRefs {
			for _, m := range r.re.FindAllStringSubmatch(text, -1) {
				refs = append(refs, path.Join(r.prefix, m[1]))
			}
		}
		for _, m := range tarList.FindAllStringSubmatch(text, -1) {
			for _, name := range strings.Fields(m[2]) {
				refs = append(refs, path.Join("hack", name))
			}
		}
		for _, ref := range refs {
			found[ref] = true
			if !exists(ref) {
				t.Errorf("%s refers to %s, which the recipe does not hold: embed it in package hack", f.Path, ref)
			}
		}
	}
	// The parser must keep seeing the references known today, or the check above proves nothing.
	for _, ref := range []string{"hack/lib/common.sh", "hack/host-prep.sh", "hack/build-kube.sh",
		"hack/build-addons.sh", "hack/build-rootfs.sh", "hack/runc-shim", "hack/pause", "hack/pause/main.go",
		"hack/node/files", "hack/node/prepare.sh", "hack/node", "hack/lib"} {
		if !found[ref] {
			t.Errorf("no script refers to %s any more, or the reference parser missed it", ref)
		}
	}
}

func TestRecipeDirIsContentAddressedAndIdempotent(t *testing.T) {
	old := syscall.Umask(0o077) // modes must not depend on the caller's umask
	defer syscall.Umask(old)
	base := t.TempDir()
	files := mustRecipe(t)

	dir, err := recipeDir(base, files)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dir) != recipeDigest(files) {
		t.Errorf("recipe dir %s is not named by its digest %s", dir, recipeDigest(files))
	}
	for _, f := range files {
		info, err := os.Stat(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != f.Mode {
			t.Errorf("%s: mode %v, want %v", f.Path, info.Mode().Perm(), f.Mode)
		}
	}
	if err := checkRecipe(dir, files); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "hack", "node-image.sh")
	before, err := os.Stat(probe)
	if err != nil {
		t.Fatal(err)
	}

	again, err := recipeDir(base, files)
	if err != nil || again != dir {
		t.Fatalf("second materialisation: %s, %v; want %s", again, err, dir)
	}
	after, err := os.Stat(probe)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("an intact recipe directory was rewritten")
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("cache holds %d entries after two materialisations, want 1 (no temporary left)", len(entries))
	}

	// A changed or added file is put right, not trusted.
	if err := os.WriteFile(probe, []byte("#!/bin/sh\necho tampered\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hack", "node", "stray"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if checkRecipe(dir, files) == nil {
		t.Fatal("checkRecipe accepted a tampered directory")
	}
	if got, err := recipeDir(base, files); err != nil || got != dir {
		t.Fatalf("repair: %s, %v", got, err)
	}
	if err := checkRecipe(dir, files); err != nil {
		t.Errorf("after repair: %v", err)
	}

	// Other contents, another directory; the first stays for binaries still using it.
	changed := slices.Clone(files)
	changed[0].Data = append(slices.Clone(changed[0].Data), '\n')
	other, err := recipeDir(base, changed)
	if err != nil {
		t.Fatal(err)
	}
	if other == dir {
		t.Error("different contents share a recipe directory")
	}
	if err := checkRecipe(dir, files); err != nil {
		t.Errorf("first recipe after writing a second: %v", err)
	}
}

// TestRecipeKeepsNodeImageKey runs node-image.sh's own key command (the tar stream it hashes) in the
// checkout's hack/ and in a materialised recipe: the bytes must match, so moving from `make
// node-image` to the installed binary never rebuilds the node image.
func TestRecipeKeepsNodeImageKey(t *testing.T) {
	if out, err := exec.Command("tar", "--version").Output(); err != nil || !strings.Contains(string(out), "GNU tar") {
		t.Skip("needs GNU tar, as node-image.sh does")
	}
	files := mustRecipe(t)
	var script []byte
	for _, f := range files {
		if f.Path == "hack/node-image.sh" {
			script = f.Data
		}
	}
	m := tarList.FindStringSubmatch(scriptText(script))
	if m == nil {
		t.Fatal("cannot find the cache key's tar command in node-image.sh")
	}
	keyStream := func(hackDir string) [32]byte {
		t.Helper()
		cmd := exec.Command("bash", "-c", m[1])
		cmd.Dir = hackDir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s in %s: %v", m[1], hackDir, err)
		}
		return sha256.Sum256(out)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := recipeDir(t.TempDir(), files)
	if err != nil {
		t.Fatal(err)
	}
	if keyStream(filepath.Join(root, "hack")) != keyStream(filepath.Join(dir, "hack")) {
		t.Errorf("node image key input differs between the checkout and the recipe (%s): a file or mode "+
			"differs; compare `tar -tvf` of both (a checkout made under a umask other than 022 differs)", m[1])
	}
}

// TestRecipeGoBuilds builds runc-shim as host-prep.sh does, from the recipe and from the checkout:
// the recipe's go.mod must build it, and to the same bytes, so switching between `make` and an
// installed binary does not replace the runtime dockerd uses. pause (build-addons.sh) must build too.
func TestRecipeGoBuilds(t *testing.T) {
	dir, err := recipeDir(t.TempDir(), mustRecipe(t))
	if err != nil {
		t.Fatal(err)
	}
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	build := func(root, output string, pkgs ...string) {
		t.Helper()
		cmd := exec.Command("go", append([]string{"build", "-trimpath", "-buildvcs=false", "-o", output}, pkgs...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build in %s: %v\n%s", root, err, b)
		}
	}
	build(dir, out+"/", "./hack/runc-shim", "./hack/pause")
	build(checkout, filepath.Join(out, "shim-checkout"), "./hack/runc-shim")
	a, errA := os.ReadFile(filepath.Join(out, "runc-shim"))
	b, errB := os.ReadFile(filepath.Join(out, "shim-checkout"))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if sha256.Sum256(a) != sha256.Sum256(b) {
		t.Error("runc-shim built from the recipe differs from the checkout's build: host-prep.sh would reinstall it on every switch")
	}
}

// TestKindConfigMatchesPortMappings keeps PortMappings and the embedded kind-config.yaml in step.
func TestKindConfigMatchesPortMappings(t *testing.T) {
	var cfg struct {
		Nodes []struct {
			Role              string `json:"role"`
			ExtraPortMappings []struct {
				ContainerPort int32  `json:"containerPort"`
				HostPort      int    `json:"hostPort"`
				ListenAddress string `json:"listenAddress"`
			} `json:"extraPortMappings"`
		} `json:"nodes"`
	}
	if err := yaml.Unmarshal(probegate.KindConfig, &cfg); err != nil {
		t.Fatalf("parse kind-config.yaml: %v", err)
	}
	if len(cfg.Nodes) != 1 {
		t.Fatalf("kind-config.yaml has %d nodes, want 1", len(cfg.Nodes))
	}
	var got []PortMapping
	for _, m := range cfg.Nodes[0].ExtraPortMappings {
		if m.ListenAddress != "127.0.0.1" {
			t.Errorf("port %d listens on %q, want 127.0.0.1", m.HostPort, m.ListenAddress)
		}
		got = append(got, PortMapping{NodePort: m.ContainerPort, HostPort: m.HostPort})
	}
	var want []PortMapping
	for _, m := range PortMappings {
		want = append(want, PortMapping{NodePort: m.NodePort, HostPort: m.HostPort})
	}
	if !slices.Equal(got, want) {
		t.Errorf("kind-config.yaml maps %v, PortMappings %v", got, want)
	}
}

// TestCreateNeedsNoCheckout resolves Create's defaults from a directory outside any checkout, with
// no PROBEGATE_ROOT: the embedded recipe is materialised under the cache and node-image.sh runs from
// it (KIND_NODE_IMAGE makes it print the image and exit before it builds or touches anything).
func TestCreateNeedsNoCheckout(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("PROBEGATE_CACHE", cache)
	t.Setenv("PROBEGATE_ROOT", "")
	t.Setenv("KIND_NODE_IMAGE", "example.invalid/node:test")
	t.Chdir(t.TempDir())

	var opts Options
	if err := opts.defaults(); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(opts.Root) != filepath.Join(cache, "recipe") {
		t.Errorf("Root = %s, want a recipe under %s", opts.Root, cache)
	}
	if opts.Config != filepath.Join(opts.Root, "kind-config.yaml") {
		t.Errorf("Config = %s, want the recipe's kind-config.yaml", opts.Config)
	}
	if data, err := os.ReadFile(opts.Config); err != nil || string(data) != string(probegate.KindConfig) {
		t.Errorf("recipe kind-config.yaml: %v", err)
	}
	out, err := runScript(t.Context(), opts.Root, "node-image.sh")
	if err != nil {
		t.Fatal(err)
	}
	if got := lastLine(string(out)); got != "example.invalid/node:test" {
		t.Errorf("node-image.sh printed %q", got)
	}
}

func TestRootOverride(t *testing.T) {
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PROBEGATE_ROOT", checkout)
	t.Setenv("PROBEGATE_CACHE", t.TempDir())
	var opts Options
	if err := opts.defaults(); err != nil {
		t.Fatal(err)
	}
	if opts.Root != checkout || opts.Config != filepath.Join(checkout, "kind-config.yaml") {
		t.Errorf("with PROBEGATE_ROOT=%s: Root %s, Config %s", checkout, opts.Root, opts.Config)
	}
	t.Setenv("PROBEGATE_ROOT", t.TempDir())
	if err := (&Options{}).defaults(); err == nil || !strings.Contains(err.Error(), "not a probegate source tree") {
		t.Errorf("PROBEGATE_ROOT without hack/: err = %v", err)
	}
}

// TestDefaultParallel: several kind nodes on this machine's CPUs run one scenario per CPU per
// node (at least one); one node keeps at least two side by side.
func TestDefaultParallel(t *testing.T) {
	cpus := runtime.NumCPU()
	if got, want := DefaultParallel(1), min(Slots, max(2, cpus)); got != want {
		t.Errorf("one node: %d, want %d", got, want)
	}
	if got, want := DefaultParallel(3), min(Slots, max(1, cpus/3)); got != want {
		t.Errorf("three nodes: %d, want %d", got, want)
	}
	if DefaultParallel(0) < 2 {
		t.Error("an existing cluster runs fewer than two side by side")
	}
}
