package hack

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// probegateCommand finds a probegate invocation at the start of a shell line (after a workflow's
// "run: ", "code=0; " and the like), up to its redirection or "||".
var probegateCommand = regexp.MustCompile(`^(?:run: )?(?:[a-z]+=[0-9]+; )?(probegate [^|>]*?)\s*(?:\|\||>|$)`)

// commands lists the probegate commands of text's shell lines, in order.
func commands(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if m := probegateCommand.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// githubWorkflow is the first yaml block of docs/ci.md: the GitHub Actions workflow.
func githubWorkflow(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## GitHub Actions")
	if !ok {
		t.Fatal("docs/ci.md has no GitHub Actions section")
	}
	_, block, ok := strings.Cut(rest, "```yaml\n")
	if !ok {
		t.Fatal("docs/ci.md: no yaml block under GitHub Actions")
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// TestCIRecipeMatchesWorkflow holds hack/ci-recipe.sh to the GitHub workflow of docs/ci.md: the
// same probegate commands, in the same order, so the script shows the workflow works.
func TestCIRecipeMatchesWorkflow(t *testing.T) {
	script, err := os.ReadFile("ci-recipe.sh")
	if err != nil {
		t.Fatal(err)
	}
	workflow, recipe := commands(githubWorkflow(t)), commands(string(script))
	if len(workflow) < 5 {
		t.Fatalf("docs/ci.md's workflow names %d probegate commands: %q", len(workflow), workflow)
	}
	if !slices.Equal(workflow, recipe) {
		t.Errorf("hack/ci-recipe.sh and docs/ci.md's workflow drifted apart:\nworkflow: %q\nscript:   %q", workflow, recipe)
	}
	for _, want := range []string{"probegate run --profile gate", "probegate run --profile nightly", "probegate compare", "--markdown"} {
		if !slices.ContainsFunc(workflow, func(c string) bool { return strings.Contains(c, want) }) {
			t.Errorf("the workflow has no %q", want)
		}
	}
}

func TestCommands(t *testing.T) {
	got := commands("  code=0; probegate run --out x || code=$?\n  run: probegate cluster create\nprobegate report x --markdown >> s\n# probegate list\n  bin/probegate list\nprobegate cluster create\n")
	want := []string{"probegate run --out x", "probegate cluster create", "probegate report x --markdown", "probegate cluster create"}
	if !slices.Equal(got, want) {
		t.Errorf("commands = %q, want %q", got, want)
	}
}
