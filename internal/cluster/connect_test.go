package cluster

import (
	"os"
	"path/filepath"
	"testing"
)

const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://127.0.0.1:6443"}
- name: b
  cluster: {server: "https://127.0.0.1:7443"}
users:
- name: u
  user: {token: t}
contexts:
- name: a
  context: {cluster: a, user: u}
- name: b
  context: {cluster: b, user: u}
current-context: a
`

// One loader serves run's --kubeconfig, the kind cluster and lint's --context.
func TestLoadKubeconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	for ctxName, want := range map[string]string{"": "https://127.0.0.1:6443", "b": "https://127.0.0.1:7443"} {
		cfg, err := LoadKubeconfig(path, ctxName)
		if err != nil {
			t.Fatalf("context %q: %v", ctxName, err)
		}
		if cfg.Host != want || cfg.QPS != 50 || cfg.Burst != 100 {
			t.Errorf("context %q: host %s qps %v burst %d, want %s 50 100", ctxName, cfg.Host, cfg.QPS, cfg.Burst, want)
		}
	}
	if _, err := LoadKubeconfig(filepath.Join(t.TempDir(), "missing"), ""); err == nil {
		t.Error("a missing kubeconfig loaded")
	}
}
