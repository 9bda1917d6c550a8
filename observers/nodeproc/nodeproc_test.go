package nodeproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// local runs commands on this machine, standing in for the node.
func local(ctx context.Context, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, args[0], args[1:]...).Output()
}

func TestStartWaitsForThePidAndStopKillsIt(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "p.pid")
	script := "echo $$ > " + pid + "; echo hello; exec sleep 60"
	p, err := Start(t.Context(), local, "test script", pid, script)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	out, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(out)) != "hello" || time.Since(begin) > 10*time.Second {
		t.Errorf("out %q after %s, want hello at once", out, time.Since(begin))
	}
	if _, err := os.Stat(pid); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
	if out, err := p.Stop(); out != nil || err != nil {
		t.Errorf("second Stop = %q, %v", out, err)
	}
}

func TestStartReportsAScriptThatEndsAtOnce(t *testing.T) {
	_, err := Start(t.Context(), local, "test script", filepath.Join(t.TempDir(), "never.pid"), "exit 3")
	if err == nil || !strings.Contains(err.Error(), "ended at once") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Start(t.Context(), nil, "x", "p", "true"); err == nil {
		t.Error("no exec: want an error")
	}
	failing := func(context.Context, ...string) ([]byte, error) { return nil, errors.New("no node") }
	if _, err := Start(t.Context(), failing, "x", "p", "true"); err == nil {
		t.Error("exec failing: want an error")
	}
}
