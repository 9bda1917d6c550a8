package faults

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/faults.md from the registry")

const docsPath = "../../docs/faults.md"

// TestDocsDescribeEveryFault keeps docs/faults.md in step with the registry: it is rendered from
// the registered definitions (go test ./internal/faults -run TestDocs -update rewrites it).
func TestDocsDescribeEveryFault(t *testing.T) {
	want := renderDocs(Definitions())
	if *update {
		if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("docs/faults.md is not the registry's rendering; run go test ./internal/faults -run TestDocs -update")
	}
}

// renderDocs writes the fault catalogue as markdown.
func renderDocs(defs []Definition) string {
	var b strings.Builder
	b.WriteString(`# Fault types

A scenario's ` + "`faults`" + ` list injects these, each at an offset, for a duration (one-shot faults take
none) and with optional parameters:

` + "```yaml" + `
faults:
  - type: db-latency
    at: 10s
    duration: 25s
    params: {latency: 2000ms}
` + "```" + `

Each fault type is one file in ` + "`internal/faults`" + ` that registers itself; this page is rendered from
those registrations (` + "`go test ./internal/faults -run TestDocs -update`" + `). A fault whose needs the target
does not meet is skipped with a note saying which, and the verdicts that rest on it are INCONCLUSIVE;
so are they when a fault the schedule never reached is recorded as skipped, or a fault ran late or
short of its declared duration (see docs/verdicts.md, "A PASS must be earned").
"Proof of effect" is what the fault measures to show it took hold (its ` + "`observe`" + ` actions on the
timeline); "explains restarts" are the restart causes it brings about in the pods it acts on.
A database fault's proof measures probegate's own round trip through the proxy (a port-forward to the
toxiproxy pod): a round trip that never reached the proxy (the forward failed, the run was cancelled)
proves nothing and leaves the fault unproven. Its proof also says whether the target is on that path:
the connections toxiproxy accepted from each of the target's pods so far, read from toxiproxy's own log
(` + "`target_connections`" + `, ` + "`target_pods_unseen`" + ` on the observe action). When that log shows no connection
from any of the target's pods, the fault acts on a path the target is not on (it reaches its database
by a pod IP or a Service the target file does not declare, or never connected): the proof is not
confirmed, so the fault is unproven and every verdict resting on it is INCONCLUSIVE, saying so
(control: fixtures/statefulset/bypass). One pod on the path is enough; a log that cannot be read is
noted and leaves the round trip to decide.
`)
	for _, d := range defs {
		fmt.Fprintf(&b, "\n### %s\n\n%s.\n\n", d.Type, upperFirst(d.Doc))
		if len(d.Needs) > 0 {
			needs := make([]string, len(d.Needs))
			for i, c := range d.Needs {
				needs[i] = fmt.Sprintf("`%s` (%s)", c.Name, c.Doc)
			}
			fmt.Fprintf(&b, "- **Needs:** %s\n", strings.Join(needs, ", "))
		}
		fmt.Fprintf(&b, "- **Proof of effect:** %s\n", d.Proof)
		if len(d.Explains) > 0 {
			causes := make([]string, len(d.Explains))
			for i, c := range d.Explains {
				causes[i] = "`" + string(c) + "`"
			}
			fmt.Fprintf(&b, "- **Explains restarts:** %s\n", strings.Join(causes, ", "))
		}
		if len(d.Params) == 0 {
			b.WriteString("\nNo parameters.\n")
			continue
		}
		b.WriteString("\n| parameter | kind | meaning |\n|-----------|------|---------|\n")
		for _, p := range d.Params {
			doc := p.Doc
			if p.Required && !strings.Contains(doc, "required") {
				doc += " (required)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", p.Name, p.Kind, doc)
		}
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
