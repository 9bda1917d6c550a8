package verdicttest

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/probegate/probegate/internal/timeline"
)

// Recorded loads a run recorded on the kind cluster: dir/name.timeline.jsonl.gz and
// dir/name.requests.jsonl.gz (internal/verdict/testdata holds db-slowness and
// pod-delete-under-load of the good target).
func Recorded(t testing.TB, dir, name string) (*timeline.Timeline, []timeline.Request) {
	t.Helper()
	open := func(kind string) *gzip.Reader {
		f, err := os.Open(filepath.Join(dir, name+"."+kind+".jsonl.gz"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	tl, err := timeline.Load(open("timeline"))
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := timeline.LoadRequests(open("requests"))
	if err != nil {
		t.Fatal(err)
	}
	return tl, reqs
}
