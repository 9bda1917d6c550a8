package cli

import (
	"strings"
	"testing"
)

// A bad worker count ends with exit 2 and one line on stderr before the host or a cluster is touched.
func TestClusterCreateBadWorkersExitsTwoWithOneLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"negative", "", []string{"cluster", "create", "--workers", "-1"}, "probegate: -1 worker nodes: want 0 to "},
		{"too many", "", []string{"cluster", "create", "--workers", "99"}, "probegate: 99 worker nodes: want 0 to "},
		{"not a number", "two", []string{"cluster", "create"}, `probegate: PROBEGATE_WORKERS="two" is not a number`},
		{"with a config", "", []string{"cluster", "create", "--workers", "2", "--config", "my.yaml"}, "probegate: both a kind config (my.yaml) and 2 workers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PROBEGATE_WORKERS", tc.env)
			t.Setenv("PROBEGATE_CACHE", t.TempDir())
			code, _, stderr := runMain(t, tc.args...)
			if code != 2 || !strings.HasPrefix(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line starting %q", code, stderr, tc.want)
			}
		})
	}
}
