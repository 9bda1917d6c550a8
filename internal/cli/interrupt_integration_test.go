package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/testcluster"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
)

// TestIntegrationInterruptRun runs the real `probegate run --scenario db-slowness` binary on the
// kind cluster, waits until its streamed timeline shows the db-latency toxic injected, sends it
// SIGINT, and checks that it stopped cleanly: exit 130 within 30 s, no toxic left on the
// scenario's toxiproxy (its API, polled from the host while the run stops), the namespace gone or
// terminating, and report.json written and marked interrupted.
func TestIntegrationInterruptRun(t *testing.T) {
	env := testcluster.Require(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := buildProbegate(t, root)

	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "run", "--scenario", "db-slowness", "--out", out)
	cmd.Dir = root
	stderrPath := filepath.Join(dir, "stderr")
	stderr, err := os.Create(stderrPath)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	logs := func() string {
		b, _ := os.ReadFile(stderrPath)
		return fmt.Sprintf("stdout:\n%s\nstderr:\n%s", stdout.String(), b)
	}
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	}()

	// Wait for the fault in the timeline the run streams into its report directory.
	streamed := filepath.Join(out, "scenarios", "db-slowness-good", reports.TimelineFile)
	var slot int
	deadline := time.Now().Add(6 * time.Minute)
	for {
		entries := readStreamed(streamed)
		slot = slotOf(entries)
		if faultAction(entries, "db-latency", timeline.FaultInject) {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("probegate exited (%v) before the fault was injected\n%s", err, logs())
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no db-latency inject in %s after 6 minutes\n%s", streamed, logs())
		}
	}
	toxiproxy := fmt.Sprintf("http://127.0.0.1:%d", cluster.HostPort(cluster.ToxiproxyNodePort(slot)))
	if n, err := toxicCount(toxiproxy); err != nil || n != 1 {
		t.Fatalf("toxiproxy %s during the fault: %d toxics, err %v; want the db-latency one", toxiproxy, n, err)
	}

	// Watch the proxy's toxics from the host while the run stops: the last answer before the
	// namespace (and toxiproxy with it) goes must show none.
	var mu sync.Mutex
	var lastCount = -1
	var lastAnswer, firstClean time.Time
	stopPolling := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			if n, err := toxicCount(toxiproxy); err == nil {
				mu.Lock()
				lastCount, lastAnswer = n, time.Now()
				if n == 0 && firstClean.IsZero() {
					firstClean = lastAnswer
				}
				mu.Unlock()
			}
			select {
			case <-stopPolling:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("probegate still running 30 s after SIGINT\n%s", logs())
	}
	took := time.Since(sent)
	close(stopPolling)
	<-polled
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v after SIGINT, want 130\n%s", err, logs())
	}
	t.Logf("exit 130 %s after SIGINT", took.Round(time.Millisecond))

	mu.Lock()
	if lastCount != 0 || lastAnswer.Before(sent) {
		t.Errorf("toxiproxy's last answer (%s after SIGINT) listed %d toxics, want 0", lastAnswer.Sub(sent).Round(time.Millisecond), lastCount)
	} else {
		t.Logf("toxic gone %s after SIGINT", firstClean.Sub(sent).Round(time.Millisecond))
		if firstClean.Sub(sent) > 10*time.Second {
			t.Errorf("the toxic stayed %s after SIGINT", firstClean.Sub(sent).Round(time.Millisecond))
		}
	}
	mu.Unlock()
	if n, err := toxicCount(toxiproxy); err == nil && n != 0 {
		t.Errorf("toxiproxy still has %d toxics after the run exited", n)
	}

	rep, err := reports.LoadDir(out)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, logs())
	}
	if rep.Interrupted != "SIGINT" || len(rep.Scenarios) != 1 {
		t.Fatalf("report.json: interrupted %q, %d scenarios", rep.Interrupted, len(rep.Scenarios))
	}
	sc := rep.Scenarios[0]
	if !strings.HasPrefix(sc.Error, "interrupted by SIGINT at load") || sc.Status() == "PASS" {
		t.Errorf("scenario error %q, status %s", sc.Error, sc.Status())
	}
	if sc.Timeline == nil || !faultAction(sc.Timeline.Entries(), "db-latency", timeline.FaultRevert) {
		t.Errorf("the written timeline has no db-latency revert")
	}
	if len(sc.Requests) == 0 {
		t.Errorf("no requests written")
	}
	for _, name := range []string{reports.JUnitFile, reports.HTMLFile} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout.String(), "interrupted by SIGINT") {
		t.Errorf("the terminal summary does not say the run was interrupted\n%s", logs())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := env.Client.CoreV1().Namespaces().Get(ctx, sc.Namespace, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		t.Logf("namespace %s gone", sc.Namespace)
	case err != nil:
		t.Errorf("get namespace %s: %v", sc.Namespace, err)
	case ns.DeletionTimestamp == nil:
		t.Errorf("namespace %s was not deleted (phase %s)", sc.Namespace, ns.Status.Phase)
	default:
		t.Logf("namespace %s %s", sc.Namespace, ns.Status.Phase)
	}
}

// readStreamed parses the complete lines of a timeline.jsonl that is still being written.
func readStreamed(path string) []timeline.Entry {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []timeline.Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e timeline.Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

func faultAction(entries []timeline.Entry, faultType, action string) bool {
	for _, e := range entries {
		if e.Fault != nil && e.Fault.Type == faultType && e.Fault.Action == action {
			return true
		}
	}
	return false
}

var slotRe = regexp.MustCompile(`\bslot (\d+)\b`)

// slotOf reads the port slot from the run's start mark ("variant good, seed 101, slot 1").
func slotOf(entries []timeline.Entry) int {
	for _, e := range entries {
		if e.Mark != nil && e.Mark.Name == "start" {
			if m := slotRe.FindStringSubmatch(e.Mark.Detail); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n
			}
		}
	}
	return 0
}

// toxicCount asks the toxiproxy API how many toxics its postgres proxy has.
func toxicCount(apiURL string) (int, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(apiURL + "/proxies/postgres/toxics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("toxiproxy answered %s", resp.Status)
	}
	var toxics []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&toxics); err != nil {
		return 0, err
	}
	return len(toxics), nil
}

// clusterProbegate skips t without a cluster, else builds probegate (buildProbegate) and returns
// it with the repository's root, the directory it runs in.
func clusterProbegate(t *testing.T) (bin, root string) {
	t.Helper()
	testcluster.Require(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return buildProbegate(t, root), root
}

// buildProbegate builds the probegate binary from the repository at root, once per test process
// (each build links anew: 10 s and more on a busy host), for tests that run it as its own process
// (a signal, runs side by side). TestMain removes it.
func buildProbegate(t *testing.T, root string) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "probegate-bin-"); built.err != nil {
			return
		}
		build := exec.Command("go", "build", "-o", filepath.Join(built.dir, "probegate"), "./cmd/probegate")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("build probegate: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return filepath.Join(built.dir, "probegate")
}

// built is the directory of the binary buildProbegate built for this test process.
var built struct {
	once sync.Once
	dir  string
	err  error
}

// runBuilt runs the built probegate bin in root with args and returns its exit code and output; it
// fails the test when the binary could not be started.
func runBuilt(t *testing.T, bin, root string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("run %v: %v", args, err)
		}
		code = exit.ExitCode()
	}
	return code, out.String(), errOut.String()
}
