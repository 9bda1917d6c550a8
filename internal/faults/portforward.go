package faults

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// PortForward forwards a random port on 127.0.0.1 to port of the pod, as kubectl port-forward does,
// and returns the local address and a func that closes the forward. ctx bounds only the set-up.
func PortForward(ctx context.Context, cfg *rest.Config, namespace, pod string, port int) (string, func(), error) {
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("port-forward to %s/%s: %w", namespace, pod, err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return "", nil, fmt.Errorf("port-forward to %s/%s: API server URL %q: %w", namespace, pod, cfg.Host, err)
	}
	u.Path = path.Join(u.Path, "api/v1/namespaces", namespace, "pods", pod, "portforward")
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return "", nil, fmt.Errorf("port-forward to %s/%s:%d: %w", namespace, pod, port, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	closeOnce := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
	}
	select {
	case <-ready:
	case err := <-errc:
		return "", nil, fmt.Errorf("port-forward to %s/%s:%d: %w", namespace, pod, port, err)
	case <-ctx.Done():
		closeOnce()
		return "", nil, fmt.Errorf("port-forward to %s/%s:%d: %w", namespace, pod, port, ctx.Err())
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		closeOnce()
		return "", nil, fmt.Errorf("port-forward to %s/%s:%d: no local port: %v", namespace, pod, port, err)
	}
	return "127.0.0.1:" + strconv.Itoa(int(ports[0].Local)), closeOnce, nil
}

// PodPortEndpoint is an Endpoint that port-forwards to port of the pod chosen by choice (for the DB
// probe: the toxiproxy pod's proxy port) for each measurement.
func PodPortEndpoint(cfg *rest.Config, choice PodChoice, port int) Endpoint {
	return func(ctx context.Context) (string, func(), error) {
		pod, err := choice.Choose(ctx)
		if err != nil {
			return "", nil, err
		}
		return PortForward(ctx, cfg, choice.Namespace, pod.Name, port)
	}
}
