// Package nodeagent is probegate's node agent: a privileged pod on every node (host PID namespace)
// that does on a node what `docker exec` into a kind node container does for the local cluster. It
// finds a container's main process and every other process of it by the container's ID, sends one
// SIGSTOP or SIGCONT, reads its state, and signals a host process found by its name (kubelet). The harness reaches it through the
// API server's pod proxy (Client); cmd/probegate-agent -node serves it (Server). It imports nothing
// but the standard library and the agents' Transport, so the FROM-scratch agent image stays small.
package nodeagent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrGone says the process or container asked about is not (or no longer) on the node.
var ErrGone = errors.New("not on the node")

// ErrAmbiguous says a name matches more than one host process.
var ErrAmbiguous = errors.New("ambiguous process name")

// Procs reads a node's processes from a proc file system: /proc in the agent, a fake tree in tests.
type Procs struct {
	Root string
}

// proc is what the scan keeps of one process.
type proc struct {
	pid, ppid int
	start     uint64 // start time after boot, in clock ticks (field 22 of stat)
	cgroup    string // the whole of /proc/<pid>/cgroup
}

// read reads pid's stat and cgroup; ErrGone when it has exited (or never was).
func (p Procs) read(pid int) (proc, error) {
	dir := filepath.Join(p.Root, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return proc{}, gone(err)
	}
	cg, err := os.ReadFile(filepath.Join(dir, "cgroup"))
	if err != nil {
		return proc{}, gone(err)
	}
	// The command name (field 2) is in parentheses and may hold spaces and parentheses itself: the
	// fields that follow start after the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return proc{}, fmt.Errorf("%s/stat: no command name", dir)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return proc{}, fmt.Errorf("%s/stat: %d fields after the command name, want at least 20", dir, len(f))
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return proc{}, fmt.Errorf("%s/stat: parent pid %q: %w", dir, f[1], err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return proc{}, fmt.Errorf("%s/stat: start time %q: %w", dir, f[19], err)
	}
	return proc{pid: pid, ppid: ppid, start: start, cgroup: string(cg)}, nil
}

// gone turns a missing file into ErrGone.
func gone(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %v", ErrGone, err)
	}
	return err
}

// pids lists the processes (thread-group leaders) under Root.
func (p Procs) pids() ([]int, error) {
	ents, err := os.ReadDir(p.Root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p.Root, err)
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out, nil
}

// scan reads every process whose keep returns true; processes that exit meanwhile are left out.
func (p Procs) scan(keep func(proc) bool) ([]proc, error) {
	pids, err := p.pids()
	if err != nil {
		return nil, err
	}
	var out []proc
	for _, pid := range pids {
		pr, err := p.read(pid)
		if errors.Is(err, ErrGone) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if keep(pr) {
			out = append(out, pr)
		}
	}
	return out, nil
}

// ContainerInit returns the pid of the main process of the container whose runtime ID is id: of
// the processes whose cgroup names the ID, the one whose parent is not in that cgroup (the
// container's init, started by the runtime's shim; its children share its cgroup). A process
// joined later from outside (an exec session) also has its parent outside: the earliest started of
// them is the init. ErrGone when no process runs in the container.
func (p Procs) ContainerInit(id string) (int, error) {
	if err := CheckContainerID(id); err != nil {
		return 0, err
	}
	in := func(pr proc) bool { return strings.Contains(pr.cgroup, id) }
	members, err := p.scan(in)
	if err != nil {
		return 0, err
	}
	inside := make(map[int]bool, len(members))
	for _, m := range members {
		inside[m.pid] = true
	}
	var best *proc
	for i, m := range members {
		if inside[m.ppid] {
			continue
		}
		if best == nil || m.start < best.start || m.start == best.start && m.pid < best.pid {
			best = &members[i]
		}
	}
	if best == nil {
		return 0, fmt.Errorf("%w: no process of container %s", ErrGone, id)
	}
	return best.pid, nil
}

// ContainerProcs returns the pid of every process of the container whose runtime ID is id (those
// whose cgroup names it): its main process (ContainerInit) first, then the others by pid. An
// entrypoint wrapper's app (sh -c, tini, a supervisor) is among the others. ErrGone when no process
// runs in the container.
func (p Procs) ContainerProcs(id string) ([]int, error) {
	main, err := p.ContainerInit(id)
	if err != nil {
		return nil, err
	}
	members, err := p.scan(func(pr proc) bool { return strings.Contains(pr.cgroup, id) })
	if err != nil {
		return nil, err
	}
	out := []int{main}
	for _, m := range members {
		if m.pid != main {
			out = append(out, m.pid)
		}
	}
	slices.Sort(out[1:])
	return out, nil
}

// HostProcess returns the pid of the one process named comm (its /proc/<pid>/comm) that runs
// outside every pod (its cgroup is not under kubepods): kubelet, containerd. It is an error when
// more than one process has that name; ErrGone when none does.
func (p Procs) HostProcess(comm string) (int, error) {
	if err := CheckComm(comm); err != nil {
		return 0, err
	}
	var pids []int
	_, err := p.scan(func(pr proc) bool {
		if strings.Contains(pr.cgroup, "kubepods") {
			return false
		}
		b, err := os.ReadFile(filepath.Join(p.Root, strconv.Itoa(pr.pid), "comm"))
		if err == nil && strings.TrimSuffix(string(b), "\n") == comm {
			pids = append(pids, pr.pid)
		}
		return false
	})
	switch {
	case err != nil:
		return 0, err
	case len(pids) == 0:
		return 0, fmt.Errorf("%w: no host process named %s", ErrGone, comm)
	case len(pids) > 1:
		return 0, fmt.Errorf("%w: %d host processes are named %s (pids %v), refusing to pick one", ErrAmbiguous, len(pids), comm, pids)
	}
	return pids[0], nil
}

// Exists reports whether pid is a process under Root.
func (p Procs) Exists(pid int) bool {
	_, err := os.Stat(filepath.Join(p.Root, strconv.Itoa(pid)))
	return err == nil
}

// State returns pid's state as /proc/<pid>/status gives it ("T (stopped)"); ErrGone when there is
// no such process.
func (p Procs) State(pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join(p.Root, strconv.Itoa(pid), "status"))
	if err != nil {
		return "", gone(err)
	}
	return StatusState(b), nil
}

// StatusState returns the State field of a /proc/<pid>/status ("T (stopped)"), "unknown" when it
// has none.
func StatusState(status []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "State:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// Stopped reports whether a State field says the process is stopped (by a signal or a tracer).
func Stopped(state string) bool {
	return strings.HasPrefix(state, "T") || strings.HasPrefix(state, "t")
}
