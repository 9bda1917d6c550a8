package scenarios

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// The runs take the slots longest first, two at a time, and the lone runs go after every shared
// one, even the lone run that asked first; a shared run never waits behind a lone one that waits.
func TestTurnsOrder(t *testing.T) {
	tr := newTurns(2)
	tr.settle = time.Second // every run asks well inside it, even on a loaded host
	var mu sync.Mutex
	var order []string
	running, most := 0, 0
	var wg sync.WaitGroup
	run := func(name string, span time.Duration, alone bool) {
		defer wg.Done()
		var release func()
		if alone {
			release = tr.exclusive()
		} else {
			release = tr.shared(span)
		}
		mu.Lock()
		order = append(order, name)
		running++
		most = max(most, running)
		if alone && running != 1 {
			t.Errorf("%s ran beside %d others", name, running-1)
		}
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		release()
	}
	wg.Add(1)
	go run("alone-1", 0, true) // asks first
	time.Sleep(5 * time.Millisecond)
	for _, s := range []int{10, 90, 30, 70, 50} {
		wg.Add(1)
		go run(fmt.Sprintf("shared-%d", s), time.Duration(s)*time.Second, false)
	}
	time.Sleep(5 * time.Millisecond)
	wg.Add(1)
	go run("alone-2", 0, true)
	wg.Wait()
	got := fmt.Sprint(order)
	// The first two go at once (either order); after them, longest first; the lone runs last.
	if len(order) != 7 || !(order[0] == "shared-90" || order[0] == "shared-70") ||
		fmt.Sprint(order[2:5]) != "[shared-50 shared-30 shared-10]" || order[5][:5] != "alone" || order[6][:5] != "alone" {
		t.Errorf("order %s: want the shared runs longest first, then the lone ones", got)
	}
	if most != 2 {
		t.Errorf("at most %d runs at once, want 2", most)
	}
}
