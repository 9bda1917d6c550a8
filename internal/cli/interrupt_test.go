package cli

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mainEnv makes the test binary run Main with the arguments it holds instead of the tests.
const mainEnv = "PROBEGATE_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(mainEnv); args != "" {
		os.Exit(Main(strings.Split(args, "\x1f")))
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// hangingAPIServer accepts connections on loopback and never answers, like an API server that has
// stopped responding; accepted is signalled on each connection.
func hangingAPIServer(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 16)
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), ch
}

// A signal while `probegate run` waits for the cluster stops it at once with 128+signal, never 0
// or 2, and one line saying so.
func TestRunInterruptedExitsWithTheSignal(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(sigName(tc.sig), func(t *testing.T) {
			addr, accepted := hangingAPIServer(t)
			kubeconfig := writeRunInput(t, "kubeconfig", fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: hung, cluster: {server: "https://%s"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: hung, context: {cluster: hung, user: u}}]
current-context: hung
`, addr))
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), mainEnv+"="+strings.Join([]string{
				"run", "--scenario", "db-slowness", "--kubeconfig", kubeconfig, "--out", filepath.Join(t.TempDir(), "out"),
			}, "\x1f"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-accepted: // probegate is waiting for the API server
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("probegate never reached the cluster: %s", stderr.String())
			}
			sent := time.Now()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 10s after %s: %s", tc.sig, stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("exit %v after %s, want %d; stderr:\n%s", err, tc.sig, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "probegate: interrupted by "+sigName(tc.sig)+" during setup") {
				t.Errorf("stderr does not say the run was interrupted:\n%s", stderr.String())
			}
			t.Logf("exit %d %s after %s", tc.code, time.Since(sent).Round(time.Millisecond), tc.sig)
		})
	}
}

func sigName(s syscall.Signal) string {
	if s == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}
