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
	time.Sleep(130 * time.Millisecond)
	w.Stop()
	w.Stop()
	var samples []*timeline.HostSample
	for _, e := range tl.Entries() {
		if e.Kind == timeline.KindHost {
			samples = append(samples, e.Host)
		}
	}
	if len(samples) < 3 {
		t.Fatalf("%d samples in 130 ms at 20 ms, want several", len(samples))
	}
	for _, s := range samples {
		if s.CPUWaiting <= 0.2 || s.CPUWaiting > 1 || s.Runnable != 9 || s.CPUs != 2 {
			t.Errorf("sample %+v: want waiting ≈ 0.75 (capped at 1), 9 runnable on 2 CPUs", *s)
		}
	}
}
