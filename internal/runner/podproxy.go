package runner

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// podProxy reaches an agent's HTTP API (a load agent's, a node agent's) on port of its pod through
// the API server's pod proxy: nothing but the API server needs to be reachable from probegate.
// It implements agent.Transport.
type podProxy struct {
	client  kubernetes.Interface
	ns, pod string
	port    int32
	// header is sent with every request (the node agent's token).
	header map[string]string
}

func (p podProxy) Name() string { return p.pod }

// Do implements agent.Transport.
func (p podProxy) Do(ctx context.Context, method, path string, body []byte) (io.ReadCloser, error) {
	suffix, query, _ := strings.Cut(path, "?")
	req := p.client.CoreV1().RESTClient().Verb(method).Namespace(p.ns).Resource("pods").
		Name(fmt.Sprintf("%s:%d", p.pod, p.port)).SubResource("proxy").Suffix(suffix)
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %s: %w", p.pod, path, err)
		}
		for k, vs := range q {
			for _, v := range vs {
				req = req.Param(k, v)
			}
		}
	}
	for k, v := range p.header {
		req = req.SetHeader(k, v)
	}
	if body != nil {
		req = req.Body(body).SetHeader("Content-Type", "application/json")
	}
	rc, err := req.Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %s %s: %w", p.pod, method, path, err)
	}
	return rc, nil
}
