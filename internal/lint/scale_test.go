package lint

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/benchfig"
)

// generatedManifests returns at least size bytes of Deployments, each with its own Service, in a
// few namespaces: the shape of a large platform repository linted in one go. Every workload has
// probes, so each rule does its full work.
func generatedManifests(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		ns := fmt.Sprintf("team-%d", i%7)
		fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%[1]d
  namespace: %[2]s
  labels: {app: app-%[1]d, tier: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: app-%[1]d}
  template:
    metadata:
      labels: {app: app-%[1]d, tier: web}
    spec:
      containers:
      - name: app
        image: registry.example/app-%[1]d:1.0
        ports:
        - {name: http, containerPort: 8080}
        - {name: metrics, containerPort: 9090}
        readinessProbe:
          httpGet: {path: /ready, port: http}
          periodSeconds: 5
        livenessProbe:
          httpGet: {path: /healthz, port: http}
          periodSeconds: 10
          failureThreshold: 6
---
apiVersion: v1
kind: Service
metadata:
  name: app-%[1]d
  namespace: %[2]s
spec:
  selector: {app: app-%[1]d}
  ports:
  - {name: http, port: 80, targetPort: http}
  - {name: metrics, port: 9090, targetPort: metrics}
`, i, ns)
	}
	return b.Bytes()
}

// lintGenerated parses and lints data and returns the number of findings.
func lintGenerated(tb testing.TB, data []byte) int {
	tb.Helper()
	inv, err := Parse("generated.yaml", data)
	if err != nil {
		tb.Fatal(err)
	}
	return len(Lint(inv, Config{}))
}

// TestLintScalesLinearly judges a generated inventory and one four times its size: the time per
// object must not grow with the object count (it did, quadratically, when every workload scanned
// every Service). Parsing is left out of the timing (it is linear and would hide the judging); each
// size keeps its fastest of three runs, and the bound is loose (×2.5) so a busy machine does not
// fail it.
func TestLintScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("lints about 1.2 MB; skipped with -short")
	}
	perMB := func(size int) float64 {
		data := generatedManifests(size)
		inv, err := Parse("generated.yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			Lint(inv, Config{})
			best = min(best, time.Since(start))
		}
		return best.Seconds() / (float64(len(data)) / (1 << 20))
	}
	small, large := perMB(256<<10), perMB(1<<20)
	t.Logf("judging: %.3f s/MB at 256 KiB, %.3f s/MB at 1 MiB", small, large)
	if large > 2.5*small && large > 0.05 {
		t.Errorf("judging time per MB grew from %.3f s at 256 KiB to %.3f s at 1 MiB: not linear in the object count", small, large)
	}
}

// BenchmarkLintGenerated prints the time to lint one MB of a generated 5 MB input of Deployments
// and their Services (read from memory, parse and judge), and the memory that took.
func BenchmarkLintGenerated(b *testing.B) {
	data := generatedManifests(5 << 20)
	mb := float64(len(data)) / (1 << 20)
	var took time.Duration
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		lintGenerated(b, data)
		took += time.Since(start)
	}
	runtime.ReadMemStats(&ms)
	perRun := float64(ms.TotalAlloc-before) / float64(b.N) / (1 << 20)
	secPerMB := took.Seconds() / float64(b.N) / mb
	benchfig.Print("lint-seconds-per-mb", round3(secPerMB), "s/MB", "<=1")
	b.ReportMetric(secPerMB, "s/MB")
	b.ReportMetric(perRun, "MB-alloc/op")
}
