package tune

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// secs is a duration as "4.41 s".
func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// at is a timeline offset as "+110.89 s".
func at(d time.Duration) string { return fmt.Sprintf("+%.2f s", d.Seconds()) }

// wholeSeconds rounds d up to whole seconds, the unit of every probe and shutdown field.
func wholeSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds() - 1e-9))
}

// p99 is the nearest-rank 99th percentile of ds (the maximum for fewer than 100 values).
func p99(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(0.99*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func longest(ev []Evidence) Evidence {
	var m Evidence
	for i, e := range ev {
		if i == 0 || e.Value > m.Value {
			m = e
		}
	}
	return m
}

func values(ev []Evidence) []time.Duration {
	out := make([]time.Duration, len(ev))
	for i, e := range ev {
		out[i] = e.Value
	}
	return out
}
