package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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

// Connect with a kubeconfig pings its API server and records the server's version; a server that
// does not answer is one line naming it.
func TestConnectKubeconfig(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"major":"1","minor":"34","gitVersion":"v1.34.4"}`))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := strings.ReplaceAll(twoContexts, "https://127.0.0.1:6443", srv.URL)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c, kc, err := Connect(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if kc != nil || c.Name != srv.URL || c.Version != "v1.34.4" || c.Client == nil {
		t.Fatalf("conn = %+v, kind = %v", c, kc)
	}
	srv.Close()
	if _, _, err := Connect(context.Background(), path, nil); err == nil || !strings.Contains(err.Error(), "cluster "+srv.URL+" is unreachable") {
		t.Fatalf("closed server: %v", err)
	}
}
