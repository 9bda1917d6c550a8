package cluster

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A node command runs in its own process group, so a Ctrl-C on the terminal (sent to probegate's
// group) does not kill it; plain commands stay in probegate's group.
func TestRunCmdAloneHasItsOwnProcessGroup(t *testing.T) {
	pgrp := func(out []byte, err error) int {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("pgrp %q: %v", out, err)
		}
		return n
	}
	const script = `set -- $(cat /proc/$$/stat); echo $5`
	ours := syscall.Getpgrp()
	if got := pgrp(runCmd(context.Background(), nil, "sh", "-c", script)); got != ours {
		t.Errorf("runCmd: process group %d, want ours (%d)", got, ours)
	}
	if got := pgrp(runCmdAlone(context.Background(), "sh", "-c", script)); got == ours {
		t.Errorf("runCmdAlone: process group %d is ours", got)
	}
}
