package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/probegate/probegate/loadgen/agent"
)

const (
	idA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	idB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	idC = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

// fakeProc is one process of a fake proc tree.
type fakeProc struct {
	pid, ppid int
	start     int
	comm      string
	cgroup    string
	state     string
}

// procTree writes procs as a proc file system (stat, status, cgroup, comm) under a temporary root.
func procTree(t *testing.T, procs ...fakeProc) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(p.pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		state := p.state
		if state == "" {
			state = "S (sleeping)"
		}
		// Fields 3..22 of stat: state, ppid, then 17 fields up to the start time (field 22).
		stat := fmt.Sprintf("%d (%s) %c %d %s %d 0 0\n", p.pid, p.comm, state[0], p.ppid, strings.Repeat("0 ", 17), p.start)
		files := map[string]string{
			"stat":   stat,
			"status": fmt.Sprintf("Name:\t%s\nUmask:\t0022\nState:\t%s\nPid:\t%d\nPPid:\t%d\n", p.comm, state, p.pid, p.ppid),
			"cgroup": "0::" + p.cgroup + "\n",
			"comm":   p.comm + "\n",
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Entries that are not processes are ignored.
	if err := os.WriteFile(filepath.Join(root, "uptime"), []byte("1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func podCgroup(id string) string {
	return "/../../kubelet-kubepods-besteffort-pod1234.slice/cri-containerd-" + id + ".scope"
}

// node is a node's processes: a shim per container, container A's init with children (one forked
// within the init's first clock tick, with a lower pid than the init: pids wrap) and an exec session, container B, kubelet and a pod process
// that happens to be called kubelet too.
func node(t *testing.T) string {
	return procTree(t,
		fakeProc{pid: 1, ppid: 0, start: 1, comm: "systemd", cgroup: "/init.scope"},
		fakeProc{pid: 40, ppid: 1, start: 50, comm: "kubelet", cgroup: "/system.slice/kubelet.service"},
		fakeProc{pid: 50, ppid: 1, start: 100, comm: "containerd-shim", cgroup: "/system.slice/containerd.service"},
		fakeProc{pid: 51, ppid: 1, start: 110, comm: "containerd-shim", cgroup: "/system.slice/containerd.service"},
		fakeProc{pid: 90, ppid: 100, start: 200, comm: "worker", cgroup: podCgroup(idA)},
		fakeProc{pid: 100, ppid: 50, start: 200, comm: "target", cgroup: podCgroup(idA)},
		fakeProc{pid: 101, ppid: 100, start: 210, comm: "worker (x) y", cgroup: podCgroup(idA)},
		fakeProc{pid: 95, ppid: 50, start: 900, comm: "sh", cgroup: podCgroup(idA)}, // kubectl exec, pid wrapped
		fakeProc{pid: 200, ppid: 51, start: 220, comm: "kubelet", cgroup: podCgroup(idB)},
	)
}

func TestContainerInitIsTheProcessWhoseParentIsOutside(t *testing.T) {
	p := Procs{Root: node(t)}
	if pid, err := p.ContainerInit(idA); err != nil || pid != 100 {
		t.Errorf("ContainerInit(A) = %d, %v; want 100 (not its children 90, 101, nor the later exec 95)", pid, err)
	}
	if pid, err := p.ContainerInit(idB); err != nil || pid != 200 {
		t.Errorf("ContainerInit(B) = %d, %v; want 200", pid, err)
	}
	if pid, err := p.ContainerInit(idC); !errors.Is(err, ErrGone) {
		t.Errorf("ContainerInit(C) = %d, %v; want ErrGone", pid, err)
	}
	if _, err := p.ContainerInit("abc"); err == nil || errors.Is(err, ErrGone) {
		t.Errorf("a malformed ID: %v, want a validation error", err)
	}
}

// Every process of a container, for a freeze that must stop an entrypoint wrapper's app too: the
// main process first, then its children and the exec session, and no other container's.
func TestContainerProcsListsEveryProcessMainFirst(t *testing.T) {
	p := Procs{Root: node(t)}
	if pids, err := p.ContainerProcs(idA); err != nil || fmt.Sprint(pids) != "[100 90 95 101]" {
		t.Errorf("ContainerProcs(A) = %v, %v; want [100 90 95 101]", pids, err)
	}
	if pids, err := p.ContainerProcs(idB); err != nil || fmt.Sprint(pids) != "[200]" {
		t.Errorf("ContainerProcs(B) = %v, %v; want [200]", pids, err)
	}
	if _, err := p.ContainerProcs(idC); !errors.Is(err, ErrGone) {
		t.Errorf("ContainerProcs(C): %v, want ErrGone", err)
	}
}

func TestHostProcessSkipsPodsAndRefusesAmbiguity(t *testing.T) {
	root := node(t)
	p := Procs{Root: root}
	if pid, err := p.HostProcess("kubelet"); err != nil || pid != 40 {
		t.Errorf("HostProcess(kubelet) = %d, %v; want 40 (200 is a pod's)", pid, err)
	}
	if pid, err := p.HostProcess("dockerd"); !errors.Is(err, ErrGone) {
		t.Errorf("HostProcess(dockerd) = %d, %v; want ErrGone", pid, err)
	}
	if pid, err := p.HostProcess("containerd-shim"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("HostProcess(containerd-shim) = %d, %v; want ErrAmbiguous (two of them)", pid, err)
	}
	if _, err := p.HostProcess("../etc"); err == nil || errors.Is(err, ErrGone) {
		t.Errorf("a malformed name: %v, want a validation error", err)
	}
}

func TestStateReadsStatus(t *testing.T) {
	p := Procs{Root: procTree(t, fakeProc{pid: 7, ppid: 1, comm: "x", cgroup: "/", state: "T (stopped)"})}
	if st, err := p.State(7); err != nil || st != "T (stopped)" || !Stopped(st) {
		t.Errorf("State(7) = %q, %v", st, err)
	}
	if _, err := p.State(8); !errors.Is(err, ErrGone) {
		t.Errorf("State(8): %v, want ErrGone", err)
	}
	if st := StatusState([]byte("Name:\tx\n")); st != "unknown" || Stopped(st) {
		t.Errorf("no State line: %q", st)
	}
	if Stopped("S (sleeping)") || !Stopped("t (tracing stop)") {
		t.Error("Stopped misreads the state letter")
	}
}

func TestInputValidation(t *testing.T) {
	for _, s := range []string{"", "0", "1", "-5", "+5", "12a", " 12", "0x10", "99999999999", "4194305"} {
		if pid, err := ParsePID(s); err == nil {
			t.Errorf("ParsePID(%q) = %d, want an error", s, pid)
		}
	}
	for s, want := range map[string]int{"2": 2, "4242": 4242, "4194304": 4194304} {
		if pid, err := ParsePID(s); err != nil || pid != want {
			t.Errorf("ParsePID(%q) = %d, %v", s, pid, err)
		}
	}
	for _, s := range []string{"", "KILL", "TERM", "stop", "SIGSTOP", "9"} {
		if _, err := ParseSignal(s); err == nil {
			t.Errorf("ParseSignal(%q) accepted", s)
		}
	}
	if sig, err := ParseSignal("STOP"); err != nil || sig != syscall.SIGSTOP {
		t.Errorf("ParseSignal(STOP) = %v, %v", sig, err)
	}
	if sig, err := ParseSignal("CONT"); err != nil || sig != syscall.SIGCONT {
		t.Errorf("ParseSignal(CONT) = %v, %v", sig, err)
	}
	for _, s := range []string{"", idA[:63], idA + "a", strings.ToUpper(idA), "containerd://" + idA[13:], idA[:63] + "g", idA[:62] + "/."} {
		if CheckContainerID(s) == nil {
			t.Errorf("CheckContainerID(%q) accepted", s)
		}
	}
	if err := CheckContainerID(idA); err != nil {
		t.Error(err)
	}
	for _, s := range []string{"", "a/b", "x y", "a-name-too-long-for-comm", "kube\nlet"} {
		if CheckComm(s) == nil {
			t.Errorf("CheckComm(%q) accepted", s)
		}
	}
	for _, s := range []string{"kubelet", "containerd", "kube-proxy", "a.b_c"} {
		if err := CheckComm(s); err != nil {
			t.Error(err)
		}
	}
}

// kills records the signals a server sent instead of sending them.
type kills struct {
	mu   sync.Mutex
	sent []string
	err  error
}

func (k *kills) kill(pid int, sig syscall.Signal) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return k.err
	}
	k.sent = append(k.sent, fmt.Sprintf("%d:%d", pid, sig))
	return nil
}

// tokenRT adds the token header to every request.
type tokenRT string

func (t tokenRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(TokenHeader, string(t))
	return http.DefaultTransport.RoundTrip(r)
}

func serve(t *testing.T, s *Server) (*httptest.Server, Client) {
	t.Helper()
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs, Client{T: agent.HTTPTransport{Base: hs.URL, Client: &http.Client{Transport: tokenRT("s3cret")}}}
}

func TestAPIOverHTTP(t *testing.T) {
	k := &kills{}
	hs, c := serve(t, &Server{Procs: Procs{Root: node(t)}, Token: "s3cret", Kill: k.kill, Self: 300})
	ctx := context.Background()

	if pid, err := c.ContainerPID(ctx, idA); err != nil || pid != 100 {
		t.Fatalf("ContainerPID(A) = %d, %v", pid, err)
	}
	if _, err := c.ContainerPID(ctx, idC); !errors.Is(err, ErrGone) {
		t.Errorf("ContainerPID(C): %v, want ErrGone", err)
	}
	if err := c.Signal(ctx, 100, "STOP"); err != nil {
		t.Fatal(err)
	}
	if err := c.Signal(ctx, 100, "CONT"); err != nil {
		t.Fatal(err)
	}
	if err := c.Signal(ctx, 4242, "CONT"); !errors.Is(err, ErrGone) {
		t.Errorf("signal to a pid not on the node: %v, want ErrGone", err)
	}
	if pid, err := c.SignalHost(ctx, "kubelet", "STOP"); err != nil || pid != 40 {
		t.Errorf("SignalHost(kubelet) = %d, %v", pid, err)
	}
	if st, err := c.State(ctx, 101); err != nil || st != "S (sleeping)" {
		t.Errorf("State(101) = %q, %v", st, err)
	}
	if _, err := c.State(ctx, 4242); !errors.Is(err, ErrGone) {
		t.Errorf("State(4242): %v, want ErrGone", err)
	}
	want := fmt.Sprintf("100:%d 100:%d 40:%d", syscall.SIGSTOP, syscall.SIGCONT, syscall.SIGSTOP)
	if got := strings.Join(k.sent, " "); got != want {
		t.Errorf("signals sent %q, want %q", got, want)
	}

	// Refused requests: nothing is signalled.
	k.sent = nil
	for _, tc := range []struct {
		method, path string
		token        string
		status       int
	}{
		{"POST", "/v1/signal?pid=100&signal=STOP", "", http.StatusUnauthorized},
		{"POST", "/v1/signal?pid=100&signal=STOP", "wrong", http.StatusUnauthorized},
		{"POST", "/v1/signal?pid=100&signal=KILL", "s3cret", http.StatusBadRequest},
		{"POST", "/v1/signal?pid=abc&signal=STOP", "s3cret", http.StatusBadRequest},
		{"POST", "/v1/signal?pid=1&signal=STOP", "s3cret", http.StatusBadRequest},
		{"POST", "/v1/signal?pid=100;200&signal=STOP", "s3cret", http.StatusBadRequest},
		{"POST", "/v1/signal?pid=300&signal=STOP", "s3cret", http.StatusBadRequest}, // the agent itself
		{"GET", "/v1/signal?pid=100&signal=STOP", "s3cret", http.StatusMethodNotAllowed},
		{"POST", "/v1/host-signal?comm=../kubelet&signal=STOP", "s3cret", http.StatusBadRequest},
		{"POST", "/v1/host-signal?comm=kubelet&signal=TERM", "s3cret", http.StatusBadRequest},
		{"POST", "/v1/host-signal?comm=containerd-shim&signal=STOP", "s3cret", http.StatusConflict},
		{"GET", "/v1/container?id=" + idA[:12], "s3cret", http.StatusBadRequest},
		{"GET", "/v1/state?pid=", "s3cret", http.StatusBadRequest},
		{"GET", "/healthz", "", http.StatusNoContent},
	} {
		req, _ := http.NewRequest(tc.method, hs.URL+tc.path, nil)
		if tc.token != "" {
			req.Header.Set(TokenHeader, tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s (token %q): %s %s, want %d", tc.method, tc.path, tc.token, resp.Status, body, tc.status)
		}
	}
	if len(k.sent) > 0 {
		t.Errorf("refused requests sent signals: %v", k.sent)
	}
	// A failing kill is a server error, a vanished process is gone.
	k.err = syscall.EPERM
	if err := c.Signal(ctx, 100, "STOP"); err == nil || errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "500") {
		t.Errorf("kill failing with EPERM: %v, want a 500", err)
	}
	k.err = syscall.ESRCH
	if err := c.Signal(ctx, 100, "STOP"); !errors.Is(err, ErrGone) {
		t.Errorf("kill failing with ESRCH: %v, want ErrGone", err)
	}
}

// TestAPIStopsAndResumesARealProcess drives a real child process through the API over real HTTP,
// with the real /proc and kill.
func TestAPIStopsAndResumesARealProcess(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep to run: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	_, c := serve(t, &Server{Procs: Procs{Root: "/proc"}, Token: "s3cret"})
	ctx := context.Background()
	pid := cmd.Process.Pid
	waitState := func(stopped bool) string {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			st, err := c.State(ctx, pid)
			if err != nil {
				t.Fatal(err)
			}
			if Stopped(st) == stopped || time.Now().After(deadline) {
				return st
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := c.Signal(ctx, pid, "STOP"); err != nil {
		t.Fatal(err)
	}
	if st := waitState(true); !Stopped(st) {
		t.Fatalf("after STOP the state is %q", st)
	}
	if err := c.Signal(ctx, pid, "CONT"); err != nil {
		t.Fatal(err)
	}
	if st := waitState(false); Stopped(st) {
		t.Fatalf("after CONT the state is %q", st)
	}
}
