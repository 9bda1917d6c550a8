package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hostPrep runs hack/host-prep.sh: docker installed and running, the runtime workaround where the
// host needs it, the Docker egress fence, and the IPv4-only kind network.
func hostPrep(ctx context.Context, opts Options) error {
	if _, err := runScript(ctx, opts.Root, "host-prep.sh"); err != nil {
		return fmt.Errorf("prepare host: %w", err)
	}
	return nil
}

// runScript runs hack/<name> from root (see recipeRoot), streaming its stderr (progress) to ours, and
// returns its stdout.
func runScript(ctx context.Context, root, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(root, "hack", name)}, args...)...)
	cmd.Stderr = os.Stderr
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("hack/%s: %w", name, err)
	}
	return out, nil
}

// ensureKind returns the path of the pinned kind CLI, installing it with `go install` when the one
// on PATH is missing or another version.
func ensureKind(ctx context.Context, log *slog.Logger) (string, error) {
	cached := filepath.Join(CacheDir(), "bin", "kind")
	for _, candidate := range []string{cached, "kind"} {
		path, err := exec.LookPath(candidate)
		if err != nil {
			continue
		}
		out, err := runCmd(ctx, nil, path, "version")
		if err == nil && strings.Contains(string(out), "kind "+KindVersion+" ") {
			return path, nil
		}
	}
	log.Info("installing kind", "version", KindVersion, "into", filepath.Dir(cached))
	env := append(os.Environ(), "GOBIN="+filepath.Dir(cached), "CGO_ENABLED=0")
	if _, err := runCmd(ctx, env, "go", "install", "sigs.k8s.io/kind@"+KindVersion); err != nil {
		return "", fmt.Errorf("install kind %s: %w", KindVersion, err)
	}
	return cached, nil
}

// Host-global sysctls written through the privileged node container: by kubelet, and by the node's
// systemd, which raises fs.file-max and fs.nr_open to the maximum when it starts as PID 1 (seen on a
// freshly booted host). They are recorded before a cluster is created and restored when it is deleted.
var kubeletSysctls = []string{
	"fs.file-max",
	"fs.nr_open",
	"vm.overcommit_memory",
	"vm.panic_on_oom",
	"kernel.panic",
	"kernel.panic_on_oops",
	"kernel.keys.root_maxkeys",
	"kernel.keys.root_maxbytes",
	"net.ipv6.conf.all.forwarding",
	"net.ipv6.conf.default.forwarding",
}

func sysctlFile(name string) string { return filepath.Join(CacheDir(), name+".host-sysctls") }

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

// recordSysctls saves the current values, unless a record from an earlier, not yet deleted cluster
// exists (that record holds the values from before any cluster).
func recordSysctls(name string) error {
	if _, err := os.Stat(sysctlFile(name)); err == nil {
		return nil
	}
	var b strings.Builder
	for _, k := range kubeletSysctls {
		v, err := os.ReadFile(sysctlPath(k))
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "%s=%s\n", k, strings.TrimSpace(string(v)))
	}
	if err := os.WriteFile(sysctlFile(name), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("record host sysctls: %w", err)
	}
	return nil
}

// restoreSysctls writes the recorded values back and forgets the record.
func restoreSysctls(name string, log *slog.Logger) error {
	f, err := os.Open(sysctlFile(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read recorded host sysctls: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var failed []string
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		cur, _ := os.ReadFile(sysctlPath(k))
		if strings.TrimSpace(string(cur)) == v {
			continue
		}
		if err := os.WriteFile(sysctlPath(k), []byte(v), 0o644); err != nil {
			failed = append(failed, k)
			continue
		}
		log.Info("restored host sysctl", "key", k, "from", strings.TrimSpace(string(cur)), "to", v)
	}
	if len(failed) > 0 {
		return fmt.Errorf("restore host sysctls %s: permission denied or read-only", strings.Join(failed, ", "))
	}
	return os.Remove(sysctlFile(name))
}
