package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"
)

// Timeline is an ordered, append-only, concurrency-safe list of entries. Entries are kept sorted by
// T; Seq records append order. A Timeline may stream each entry as JSON Lines as it is appended.
type Timeline struct {
	mu      sync.Mutex
	start   time.Time
	entries []Entry
	nextSeq int64
	sink    *json.Encoder
	sinkErr error
}

// New returns an empty timeline whose offsets count from start. Pass time.Now() so offsets use the
// monotonic clock.
func New(start time.Time) *Timeline { return &Timeline{start: start} }

// Start is the instant offsets count from.
func (t *Timeline) Start() time.Time { return t.start }

// Since converts an instant to an offset from the start (monotonic when both carry a reading).
func (t *Timeline) Since(at time.Time) time.Duration { return at.Sub(t.start) }

// Now returns the current wall time and offset, read once from the monotonic clock.
func (t *Timeline) Now() (time.Time, time.Duration) {
	now := time.Now()
	return now, now.Sub(t.start)
}

// StreamTo writes every entry appended from now on to w as one JSON line. Write errors are kept and
// returned by Err; they never block appends.
func (t *Timeline) StreamTo(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sink = json.NewEncoder(w)
}

// Err returns the first error met while streaming.
func (t *Timeline) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sinkErr
}

// Append stamps e and adds it. If e.At is zero it is stamped now; T is computed from At. The stored
// entry (with Seq and T set) is returned.
func (t *Timeline) Append(e Entry) Entry {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if e.T == 0 {
		e.T = e.At.Sub(t.start)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nextSeq++
	e.Seq = t.nextSeq
	// Entries almost always arrive in order; insert from the back.
	i := len(t.entries)
	for i > 0 && t.entries[i-1].T > e.T {
		i--
	}
	t.entries = append(t.entries, Entry{})
	copy(t.entries[i+1:], t.entries[i:])
	t.entries[i] = e
	if t.sink != nil && t.sinkErr == nil {
		if err := t.sink.Encode(e); err != nil {
			t.sinkErr = fmt.Errorf("stream timeline entry: %w", err)
		}
	}
	return e
}

// Len is the number of entries.
func (t *Timeline) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// Entries returns a copy of all entries in time order.
func (t *Timeline) Entries() []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Entry(nil), t.entries...)
}

// Filter returns the entries of the given kind in time order.
func (t *Timeline) Filter(kind Kind) []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Entry
	for _, e := range t.entries {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// WriteJSONL writes every entry, in time order, as JSON Lines.
func (t *Timeline) WriteJSONL(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, e := range t.Entries() {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("write timeline entry %d: %w", e.Seq, err)
		}
	}
	return nil
}

// Load reads a timeline written by WriteJSONL or StreamTo. Offsets are kept as written; the start
// is recovered from the first entry's wall time minus its offset.
func Load(r io.Reader) (*Timeline, error) {
	t := &Timeline{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("timeline line %d: %w", line, err)
		}
		if e.Kind == "" {
			return nil, fmt.Errorf("timeline line %d: entry has no kind", line)
		}
		t.entries = append(t.entries, e)
		if e.Seq > t.nextSeq {
			t.nextSeq = e.Seq
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read timeline: %w", err)
	}
	sort.SliceStable(t.entries, func(i, j int) bool { return t.entries[i].T < t.entries[j].T })
	if len(t.entries) > 0 {
		t.start = t.entries[0].At.Add(-t.entries[0].T)
	}
	return t, nil
}

// WriteRequests writes requests as JSON Lines.
func WriteRequests(w io.Writer, reqs []Request) error {
	enc := json.NewEncoder(w)
	for _, r := range reqs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write request %d: %w", r.Seq, err)
		}
	}
	return nil
}

// LoadRequests reads requests written as JSON Lines, in file order.
func LoadRequests(r io.Reader) ([]Request, error) {
	var out []Request
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var q Request
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("requests line %d: %w", line, err)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	return out, nil
}
