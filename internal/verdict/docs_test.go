package verdict_test

import (
	"os"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
)

// TestDocsDescribeEveryRule keeps docs/verdicts.md in step with the registry.
func TestDocsDescribeEveryRule(t *testing.T) {
	data, err := os.ReadFile("../../docs/verdicts.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, r := range verdict.Rules() {
		i := strings.Index(doc, "### "+r.Name+"\n")
		if i < 0 {
			t.Errorf("docs/verdicts.md has no section for %s", r.Name)
			continue
		}
		section := doc[i:]
		if j := strings.Index(section[4:], "\n### "); j >= 0 {
			section = section[:j+4]
		}
		for _, p := range r.Params {
			if !strings.Contains(section, "`"+p.Name+"`") {
				t.Errorf("docs/verdicts.md section %s does not describe parameter %s", r.Name, p.Name)
			}
		}
	}
}
