package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
)

// runCmd runs name with args and returns its stdout. On failure the error carries the command and
// the last lines of its stderr, so the user sees why without re-running it.
func runCmd(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	return run(exec.CommandContext(ctx, name, args...), env)
}

// runCmdAlone is runCmd with the command in its own process group: a Ctrl-C on the terminal
// reaches probegate alone, which decides what to stop (ending ctx kills the command). A fault's
// node command (SIGSTOP, then SIGCONT on revert) must not be killed by the very Ctrl-C whose
// teardown depends on it.
func runCmdAlone(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return run(cmd, nil)
}

func run(cmd *exec.Cmd, env []string) ([]byte, error) {
	name, args := cmd.Args[0], cmd.Args[1:]
	if env != nil {
		cmd.Env = env
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w%s", name, strings.Join(args, " "), err, tail(stderr.String(), 6))
	}
	return stdout.Bytes(), nil
}

// tail returns the last n non-empty lines of s, indented, for an error message.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "\n    " + strings.Join(lines, "\n    ")
}
