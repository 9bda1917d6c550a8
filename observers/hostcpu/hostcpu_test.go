package hostcpu

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func TestParse(t *testing.T) {
	got, err := parsePressure([]byte("some avg10=23.71 avg60=47.37 avg300=41.09 total=6205631416\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	if err != nil || got != 6205631416*time.Microsecond {
		t.Errorf("parsePressure = %s, %v; want 6205.631416s", got, err)
	}
	if _, err := parsePressure([]byte("full avg10=0.00 total=0\n")); err == nil {
		t.Error("parsePressure without a some line: no error")
	}
	n, err := parseRunnable([]byte("cpu  1 2 3\nctxt 99\nprocs_running 7\nprocs_blocked 0\n"))
	if err != nil || n != 7 {
		t.Errorf("parseRunnable = %d, %v; want 7", n, err)
	}
	if _, err := parseRunnable([]byte("cpu 1 2 3\n")); err == nil {
		t.Error("parseRunnable without procs_running: no error")
	}
}

// Each sample is the share of its interval some task waited for a CPU, from the counter's growth.
func TestStartRecordsWaitingShare(t *testing.T) {
	var mu sync.Mutex
	waited := time.Duration(0)
	read := func() (reading, error) {
		mu.Lock()
		defer mu.Unlock()
		r := reading{waiting: waited, runnable: 9}
		waited += 15 * time.Millisecond // each read after the first: 15 ms waited per 20 ms tick
		return r, nil
	}
	tl := timeline.New(time.Now())
	w, err := start(context.Background(), tl, 20*time.Millisecond, read, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	samples := func() []*timeline.HostSample {
		var out []*timeline.HostSample
		for _, e := range tl.Entries() {
			if e.Kind == timeline.KindHost {
				out = append(out, e.Host)
			}
		}
		return out
	}
	for deadline := time.Now().Add(5 * time.Second); len(samples()) < 3 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	w.Stop()
	w.Stop()
	got := samples()
	if len(got) < 3 {
		t.Fatalf("%d samples in 5 s at 20 ms, want several", len(got))
	}
	var sum float64
	for _, s := range got {
		// 15 ms waited per read, reads about 20 ms apart: about 0.75, in (0, 1] (capped).
		if s.CPUWaiting <= 0 || s.CPUWaiting > 1 || s.Runnable != 9 || s.CPUs != 2 {
			t.Errorf("sample %+v: want waiting in (0, 1], 9 runnable on 2 CPUs", *s)
		}
		sum += s.CPUWaiting
	}
	if mean := sum / float64(len(got)); mean < 0.3 {
		t.Errorf("mean waiting %.2f over %d samples, want about 0.75", mean, len(got))
	}
}
