package nodeagent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/probegate/probegate/loadgen/agent"
)

// Client calls one node agent's API through a Transport (the API server's pod proxy, or plain
// HTTP in tests), the same way the harness reaches the load agents.
type Client struct {
	T agent.Transport
}

// ContainerPID returns the pid of the main process of the container with runtime ID id (no
// scheme); ErrGone when the container runs no process on the agent's node.
func (c Client) ContainerPID(ctx context.Context, id string) (int, error) {
	res, err := c.call(ctx, http.MethodGet, "/v1/container", url.Values{"id": {id}})
	if err != nil {
		return 0, err
	}
	return res.PID, nil
}

// ContainerPIDs returns every process of the container with runtime ID id, its main one first;
// ErrGone when the container runs no process on the agent's node.
func (c Client) ContainerPIDs(ctx context.Context, id string) ([]int, error) {
	res, err := c.call(ctx, http.MethodGet, "/v1/container-procs", url.Values{"id": {id}})
	if err != nil {
		return nil, err
	}
	if len(res.PIDs) == 0 {
		return nil, fmt.Errorf("node agent %s: container %s: no pids in the answer", c.T.Name(), id)
	}
	return res.PIDs, nil
}

// State returns pid's state ("T (stopped)"); ErrGone when there is no such process.
func (c Client) State(ctx context.Context, pid int) (string, error) {
	res, err := c.call(ctx, http.MethodGet, "/v1/state", url.Values{"pid": {strconv.Itoa(pid)}})
	if err != nil {
		return "", err
	}
	return res.State, nil
}

// Signal sends sig ("STOP" or "CONT") to pid; ErrGone when there is no such process.
func (c Client) Signal(ctx context.Context, pid int, sig string) error {
	_, err := c.call(ctx, http.MethodPost, "/v1/signal", url.Values{"pid": {strconv.Itoa(pid)}, "signal": {sig}})
	return err
}

// SignalHost sends sig to the one host process named comm (kubelet) and returns its pid; ErrGone
// when no host process has that name.
func (c Client) SignalHost(ctx context.Context, comm, sig string) (int, error) {
	res, err := c.call(ctx, http.MethodPost, "/v1/host-signal", url.Values{"comm": {comm}, "signal": {sig}})
	if err != nil {
		return 0, err
	}
	return res.PID, nil
}

func (c Client) call(ctx context.Context, method, path string, q url.Values) (Result, error) {
	rc, err := c.T.Do(ctx, method, path+"?"+q.Encode(), nil)
	if err != nil {
		return Result{}, fmt.Errorf("node agent %s: %w", c.T.Name(), err)
	}
	defer rc.Close()
	var res Result
	if err := json.NewDecoder(rc).Decode(&res); err != nil {
		return Result{}, fmt.Errorf("node agent %s: %s %s: decode the answer: %w", c.T.Name(), method, path, err)
	}
	if res.Gone {
		return res, fmt.Errorf("node agent %s: %w: %s", c.T.Name(), ErrGone, res.Detail)
	}
	return res, nil
}
