package cli

import (
	"strings"
	"testing"
)

func TestVersionPrintsTheReportsVersion(t *testing.T) {
	t.Setenv("PROBEGATE_VERSION", "v9.9.9-test")
	root := newRoot()
	var out strings.Builder
	root.SetOut(&out)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "probegate v9.9.9-test (go") {
		t.Fatalf("version printed %q", out.String())
	}
}
