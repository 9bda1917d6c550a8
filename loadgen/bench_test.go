package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/internal/timeline"
)

// benchServerEnv makes the test binary serve HTTP instead of running tests: the benchmark's target
// runs in its own process, so the harness's CPU figure counts only the harness.
const benchServerEnv = "PROBEGATE_LOADGEN_BENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) == "1" {
		serveBenchTarget()
		return
	}
	os.Exit(m.Run())
}

// serveBenchTarget answers like the bundled target (a pod header and a small body) on a loopback
// port it prints, until its stdin closes.
func serveBenchTarget() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(DefaultPodHeader, "bench-pod")
		io.WriteString(w, `{"pod":"bench-pod","sum":42}`+"\n")
	}))
	io.Copy(io.Discard, os.Stdin)
}

// benchTarget returns the URL to load: PROBEGATE_BENCH_LOAD_URL (a loopback URL, e.g. the cluster's
// published target port) or a server process started from this test binary.
func benchTarget(b *testing.B) string {
	if u := os.Getenv("PROBEGATE_BENCH_LOAD_URL"); u != "" {
		if err := CheckLoopbackURL(u); err != nil {
			b.Fatal(err)
		}
		return u
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("bench server: %v", err)
	}
	return "http://" + strings.TrimSpace(addr) + "/"
}

// benchDuration is PROBEGATE_BENCH_LOAD_DURATION (default 60s): set it to 5s for a quick run.
func benchDuration(b *testing.B) time.Duration {
	d := 60 * time.Second
	if v := os.Getenv("PROBEGATE_BENCH_LOAD_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d <= 0 {
			b.Fatalf("PROBEGATE_BENCH_LOAD_DURATION=%q: want a positive duration", v)
		}
	}
	return d
}

// cpuTime is this process's user + system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadgen500 runs the recording load generator at 500 rps, then bare vegeta (its plain
// Attacker, results drained and dropped) at the same rate against the same endpoint in the same
// process, and prints the achieved-rate ratio, the harness CPU in cores, and both against bare
// vegeta.
func BenchmarkLoadgen500(b *testing.B) {
	const rate = 500
	url, du := benchTarget(b), benchDuration(b)
	b.ResetTimer()
	for range b.N {
		// Recording load: every request encoded to JSON Lines (into a discarding writer), windows on
		// the timeline.
		tl := timeline.New(time.Now())
		cpu0, wall0 := cpuTime(b), time.Now()
		rep, err := Run(context.Background(), Config{URL: url, Rate: rate, Duration: du, Timeline: tl, Requests: io.Discard})
		cpu, wall := cpuTime(b)-cpu0, time.Since(wall0)
		if err != nil {
			b.Fatal(err)
		}
		if rep.OK != rep.Sent {
			b.Fatalf("%d of %d requests failed: %v", rep.Sent-rep.OK, rep.Sent, rep.Errors)
		}
		achieved := float64(rep.Sent) / du.Seconds()
		cores := cpu.Seconds() / wall.Seconds()
		// Pacing: the worst full second of the run.
		minWindow := float64(rate)
		for _, e := range tl.Filter(timeline.KindLoad) {
			if e.Load.Second < int(du/time.Second) {
				minWindow = min(minWindow, float64(e.Load.Sent))
			}
		}

		// Bare vegeta on the same endpoint.
		atk := vegeta.NewAttacker()
		tr := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: url})
		bcpu0, bwall0 := cpuTime(b), time.Now()
		var hits, okHits int
		for res := range atk.Attack(tr, vegeta.ConstantPacer{Freq: rate, Per: time.Second}, du, "bare") {
			if res.Timestamp.Sub(bwall0) < du {
				hits++
			}
			if res.Code == 200 {
				okHits++
			}
		}
		bcpu, bwall := cpuTime(b)-bcpu0, time.Since(bwall0)
		bareAchieved := float64(hits) / du.Seconds()
		bareCores := bcpu.Seconds() / bwall.Seconds()

		b.Logf("loadgen: sent %d recorded %d in %s, %.1f/s, cpu %s over %s; bare vegeta: %d hits (%d ok), %.1f/s, cpu %s over %s",
			rep.Sent, rep.Recorded, du, achieved, cpu.Round(time.Millisecond), wall.Round(time.Millisecond),
			hits, okHits, bareAchieved, bcpu.Round(time.Millisecond), bwall.Round(time.Millisecond))
		benchfig.Print("loadgen_achieved_ratio_500rps", achieved/rate, "ratio", ">=0.99")
		benchfig.Print("loadgen_min_window_ratio_500rps", minWindow/rate, "ratio", ">=0.95")
		benchfig.Print("loadgen_cpu_500rps", cores, "cores", "<=0.3")
		benchfig.Print("vegeta_bare_achieved_ratio_500rps", bareAchieved/rate, "ratio", ">=0.99")
		benchfig.Print("vegeta_bare_cpu_500rps", bareCores, "cores", "<=0.3")
		benchfig.Print("loadgen_vs_vegeta_achieved", achieved/bareAchieved, "ratio", ">=0.99")
		benchfig.Print("loadgen_vs_vegeta_cpu", cores/bareCores, "ratio", "<=2")
	}
}
