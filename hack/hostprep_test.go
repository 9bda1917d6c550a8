package hack

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeTools writes stand-ins for docker and for every tool host-prep.sh may use to change the host
// into a directory put first on PATH. Each appends its name and arguments to calls; docker answers
// `info` when dockerUp and `network inspect kind` when kindNet. id says uid 1000, so that a
// host-prep.sh which missed its container mode stops at need_root, before it touches anything, even
// when the test runs as root.
func fakeTools(t *testing.T, dockerUp, kindNet bool) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(dir, "calls")
	exit := func(ok bool) string {
		if ok {
			return "0"
		}
		return "1"
	}
	docker := `#!/bin/sh
echo "docker $*" >>` + calls + `
case "$1 $2" in
  "info "*) exit ` + exit(dockerUp) + ` ;;
  "network inspect") exit ` + exit(kindNet) + ` ;;
  "version --format") echo 20.10.24 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(docker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "id"), []byte("#!/bin/sh\necho 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"iptables", "apt-get", "dockerd", "pkill", "go", "install", "debootstrap"} {
		if err := os.WriteFile(filepath.Join(dir, tool), []byte("#!/bin/sh\necho \""+tool+" $*\" >>"+calls+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, calls
}

// TestHostPrepInContainerChangesNothing runs host-prep.sh as probegate's container image does
// (PROBEGATE_IN_CONTAINER=1, any user): it only asks the host's docker, and says what is missing.
func TestHostPrepInContainerChangesNothing(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		name              string
		dockerUp, kindNet bool
		wantErr, wantLog  string
	}{
		{"prepared host", true, true, "", "in a container: using the host's docker 20.10.24"},
		{"no socket", false, true, "mount its socket", ""},
		{"unprepared host", true, false, "prepare the host first", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, calls := fakeTools(t, tc.dockerUp, tc.kindNet)
			cmd := exec.Command("bash", "host-prep.sh")
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "PROBEGATE_IN_CONTAINER=1",
				"PROBEGATE_CACHE="+t.TempDir())
			out, err := cmd.CombinedOutput()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("host-prep.sh: %v\n%s", err, out)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("host-prep.sh succeeded, want an error saying %q:\n%s", tc.wantErr, out)
			case !strings.Contains(string(out), tc.wantErr+tc.wantLog):
				t.Fatalf("host-prep.sh said:\n%s\nwant %q", out, tc.wantErr+tc.wantLog)
			}
			log, _ := os.ReadFile(calls)
			for _, call := range strings.Split(strings.TrimSpace(string(log)), "\n") {
				if !strings.HasPrefix(call, "docker ") {
					t.Errorf("host-prep.sh in a container ran %q; it may only ask docker", call)
				}
				if !regexp.MustCompile(`^docker (info|network inspect kind|version --format)`).MatchString(call) {
					t.Errorf("host-prep.sh in a container ran %q, which may change the host's docker", call)
				}
			}
		})
	}
}
