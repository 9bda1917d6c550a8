// Package kubeletprobes reads how long kubelet's probes took: the histogram
// prober_probe_duration_seconds that each kubelet serves at /metrics/probes, fetched through the
// API server's node proxy (so it works on any cluster where the caller may get nodes/proxy). It is
// the only record of a health handler's latency as the kubelet saw it; probe failures alone (the
// Unhealthy events) say only that a probe took longer than its timeout.
package kubeletprobes

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/probegate/probegate/internal/timeline"
)

// metric is the histogram's bucket series.
const metric = "prober_probe_duration_seconds_bucket"

// Histogram is one container's probe durations of one kind.
type Histogram struct {
	Pod     string
	Latency timeline.ProbeLatency
}

// Scrape reads the probe-duration histograms of every container in namespace from the kubelets of
// nodes.
func Scrape(ctx context.Context, client kubernetes.Interface, nodes []string, namespace string) ([]Histogram, error) {
	rc := client.CoreV1().RESTClient()
	if r, ok := rc.(*rest.RESTClient); rc == nil || (ok && r == nil) {
		return nil, fmt.Errorf("read kubelet probe metrics: the client has no REST client (a fake)")
	}
	var out []Histogram
	for _, node := range nodes {
		raw, err := rc.Get().AbsPath("/api/v1/nodes", node, "proxy", "metrics", "probes").DoRaw(ctx)
		if err != nil {
			return out, fmt.Errorf("read kubelet probe metrics of node %s: %w", node, err)
		}
		hs, err := Parse(string(raw), namespace)
		if err != nil {
			return out, fmt.Errorf("kubelet probe metrics of node %s: %w", node, err)
		}
		out = append(out, hs...)
	}
	return out, nil
}

// Parse reads the prometheus text of /metrics/probes and returns namespace's histograms, sorted by
// pod, container and probe, buckets in the order kubelet lists them (ascending bounds).
func Parse(text, namespace string) ([]Histogram, error) {
	type key struct{ pod, container, probe string }
	byKey := map[key]*Histogram{}
	var keys []key
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric+"{")
		if !ok {
			continue
		}
		labelText, value, ok := strings.Cut(rest, "} ")
		if !ok {
			return nil, fmt.Errorf("line %q: no value", line)
		}
		labels, err := parseLabels(labelText)
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", line, err)
		}
		if labels["namespace"] != namespace {
			continue
		}
		count, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: count: %w", line, err)
		}
		k := key{labels["pod"], labels["container"], strings.ToLower(labels["probe_type"])}
		h := byKey[k]
		if h == nil {
			h = &Histogram{Pod: k.pod, Latency: timeline.ProbeLatency{Probe: k.probe, Container: k.container}}
			byKey[k] = h
			keys = append(keys, k)
		}
		h.Latency.Buckets = append(h.Latency.Buckets, timeline.LatencyBucket{Le: labels["le"], Count: int64(count)})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(keys, func(a, b key) int {
		return strings.Compare(a.pod+"\x00"+a.container+"\x00"+a.probe, b.pod+"\x00"+b.container+"\x00"+b.probe)
	})
	out := make([]Histogram, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out, nil
}

// parseLabels reads `a="x",b="y"` (values without escaped quotes, as kubelet's names are).
func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for s != "" {
		name, rest, ok := strings.Cut(s, `="`)
		if !ok {
			return nil, fmt.Errorf("label list %q", s)
		}
		value, rest, ok := strings.Cut(rest, `"`)
		if !ok {
			return nil, fmt.Errorf("unterminated label %s", name)
		}
		out[strings.TrimSpace(name)] = value
		s = strings.TrimPrefix(rest, ",")
	}
	return out, nil
}
