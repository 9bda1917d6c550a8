package nodeagent

import (
	"fmt"
	"strconv"
	"syscall"
)

// Signals are the signals the agent sends, by the names its API takes: it stops and resumes
// processes, nothing else.
var Signals = map[string]syscall.Signal{"STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT}

// ParseSignal returns the allowed signal named s.
func ParseSignal(s string) (syscall.Signal, error) {
	sig, ok := Signals[s]
	if !ok {
		return 0, fmt.Errorf("signal %q is not allowed (STOP or CONT)", s)
	}
	return sig, nil
}

// ParsePID returns the pid s names: decimal digits only, above 1 (init is never signalled).
func ParsePID(s string) (int, error) {
	if s == "" || len(s) > 10 {
		return 0, fmt.Errorf("pid %q: want 1 to 10 decimal digits", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("pid %q: want decimal digits only", s)
		}
	}
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 1 || pid > 1<<22 {
		return 0, fmt.Errorf("pid %q: out of range (2 to %d)", s, 1<<22)
	}
	return pid, nil
}

// CheckContainerID accepts a container runtime's ID: 64 lowercase hexadecimal digits (containerd,
// CRI-O and Docker all use them), without the "containerd://" scheme.
func CheckContainerID(id string) error {
	if len(id) != 64 {
		return fmt.Errorf("container id %q: want 64 hexadecimal digits", id)
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("container id %q: want lowercase hexadecimal digits only", id)
		}
	}
	return nil
}

// CheckComm accepts a process name as /proc/<pid>/comm holds it: 1 to 15 letters, digits, '.',
// '_' or '-'.
func CheckComm(comm string) error {
	if comm == "" || len(comm) > 15 {
		return fmt.Errorf("process name %q: want 1 to 15 characters", comm)
	}
	for _, c := range comm {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("process name %q: want letters, digits, '.', '_' or '-' only", comm)
		}
	}
	return nil
}
