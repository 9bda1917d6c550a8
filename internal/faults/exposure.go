package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TargetPath is implemented by a DBProbe that can also say whether the target's own pods connect
// through the proxy the fault acts on. The round trip proves the proxy's path; this is the evidence
// that the target is on it (an app reaching its database by a pod IP or another Service is not).
type TargetPath interface {
	TargetPath(ctx context.Context) Exposure
}

// Exposure is what the proxy saw of the target's pods: connections it accepted from each (by pod
// IP), the pods it saw none from, or why it could not be read.
type Exposure struct {
	Proxy  string
	ByPod  map[string]int // target pod → connections the proxy accepted from its IP
	Unseen []string       // target pods the proxy accepted no connection from
	Err    error
}

// Bypassed reports that the proxy's log was read and shows no connection from any of the target's
// pods: the target is not shown on the path the fault acts on, also when the log shows no accepted
// connection at all (db-down disables the proxy before probegate's own probe has gone through it).
func (e Exposure) Bypassed() bool {
	return e.Err == nil && len(e.ByPod) == 0 && len(e.Unseen) > 0
}

// Note says the exposure in words, for the proof's detail.
func (e Exposure) Note() string {
	if e.Err != nil {
		return "the target's path through the proxy is unknown: " + e.Err.Error()
	}
	n := 0
	for _, c := range e.ByPod {
		n += c
	}
	s := fmt.Sprintf("toxiproxy's log: proxy %q accepted %d connections from %d of the target's %d pods so far",
		e.Proxy, n, len(e.ByPod), len(e.ByPod)+len(e.Unseen))
	if len(e.Unseen) > 0 {
		s += ", none from " + strings.Join(e.Unseen, ", ")
	}
	return s
}

// Params are the exposure as observe-action parameters: target_connections ("pod=n,…"),
// target_pods_unseen, or target_path_error.
func (e Exposure) Params() map[string]string {
	out := map[string]string{}
	if e.Err != nil {
		out["target_path_error"] = e.Err.Error()
		return out
	}
	pods := make([]string, 0, len(e.ByPod))
	for p := range e.ByPod {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	var b []string
	for _, p := range pods {
		b = append(b, p+"="+strconv.Itoa(e.ByPod[p]))
	}
	out["target_connections"] = strings.Join(b, ",")
	if len(e.Unseen) > 0 {
		out["target_pods_unseen"] = strings.Join(e.Unseen, ",")
	}
	return out
}

// acceptedClient is the part of a toxiproxy v2 log line (zerolog JSON) that names a connection
// the proxy accepted: {"name":"postgres","client":"10.244.0.7:41830","message":"Accepted client",…}.
type acceptedClient struct {
	Name    string `json:"name"`
	Client  string `json:"client"`
	Message string `json:"message"`
}

// acceptedFrom counts the connections proxy accepted from each pod of podIPs (IP → pod name) in a
// toxiproxy log. Lines that are not JSON or not an accepted client of proxy are skipped.
func acceptedFrom(log io.Reader, proxy string, podIPs map[string]string) (map[string]int, error) {
	out := map[string]int{}
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), "Accepted client") {
			continue
		}
		var a acceptedClient
		if json.Unmarshal(line, &a) != nil || a.Message != "Accepted client" || a.Name != proxy {
			continue
		}
		host, _, err := net.SplitHostPort(a.Client)
		if err != nil {
			continue
		}
		if pod, ok := podIPs[host]; ok {
			out[pod]++
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read toxiproxy's log: %w", err)
	}
	return out, nil
}

// maxProxyLog bounds how much of a toxiproxy pod's log the exposure reads.
const maxProxyLog = 8 << 20

// proxyExposure reads the logs of the toxiproxy pods (proxySelector) and counts the connections
// proxy accepted from the target's pods (targetSelector), by their IPs now.
func proxyExposure(ctx context.Context, client kubernetes.Interface, namespace, proxySelector, targetSelector, proxy string) Exposure {
	e := Exposure{Proxy: proxy}
	targets, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: targetSelector})
	if err != nil {
		e.Err = fmt.Errorf("list the target's pods: %w", err)
		return e
	}
	ips := map[string]string{}
	for _, p := range targets.Items {
		for _, ip := range p.Status.PodIPs {
			ips[ip.IP] = p.Name
		}
		if p.Status.PodIP != "" {
			ips[p.Status.PodIP] = p.Name
		}
	}
	if len(ips) == 0 {
		e.Err = fmt.Errorf("no pod of the target (%s) has an IP", targetSelector)
		return e
	}
	proxies, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: proxySelector})
	if err != nil || len(proxies.Items) == 0 {
		e.Err = fmt.Errorf("list the toxiproxy pods (%s): %d found, %v", proxySelector, lenPods(proxies), err)
		return e
	}
	e.ByPod = map[string]int{}
	limit := int64(maxProxyLog)
	for _, p := range proxies.Items {
		if err := readAccepted(ctx, client, namespace, p.Name, proxy, ips, limit, e.ByPod); err != nil {
			e.Err = err
			return e
		}
	}
	for _, p := range targets.Items {
		if e.ByPod[p.Name] == 0 {
			delete(e.ByPod, p.Name)
			e.Unseen = append(e.Unseen, p.Name)
		}
	}
	sort.Strings(e.Unseen)
	return e
}

// readAccepted adds to byPod the connections proxy accepted from ips in pod's log.
func readAccepted(ctx context.Context, client kubernetes.Interface, namespace, pod, proxy string, ips map[string]string, limit int64, byPod map[string]int) error {
	rc, err := client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{LimitBytes: &limit}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("read the log of toxiproxy pod %s: %w", pod, err)
	}
	defer rc.Close()
	n, err := acceptedFrom(rc, proxy, ips)
	if err != nil {
		return fmt.Errorf("toxiproxy pod %s: %w", pod, err)
	}
	for p, c := range n {
		byPod[p] += c
	}
	return nil
}

func lenPods(l *corev1.PodList) int {
	if l == nil {
		return 0
	}
	return len(l.Items)
}
