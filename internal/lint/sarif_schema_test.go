package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sarifSchemaModule holds the official SARIF 2.1.0 JSON schema (OASIS errata01,
// sarif-schema-2.1.0.json) as a Go string constant; the test reads it from the module cache rather
// than copying the third-party file into this repository.
const (
	sarifSchemaModule = "github.com/owenrumney/go-sarif/v3@v3.3.1"
	sarifSchemaFile   = "pkg/report/v210/sarif/schema.go"
	sarifSchemaID     = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

// officialSARIFSchema returns the SARIF 2.1.0 schema. A module that cannot be downloaded fails t,
// or skips it with PROBEGATE_OFFLINE=1.
func officialSARIFSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	dir, err := downloadModule(sarifSchemaModule, t.TempDir())
	if err != nil {
		moduleUnavailable(t, "the SARIF 2.1.0 schema's module %s cannot be downloaded through the module cache: %v", sarifSchemaModule, err)
	}
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(sarifSchemaFile)))
	if err != nil {
		t.Fatal(err)
	}
	_, text, ok := strings.Cut(string(src), "const schema = `")
	if ok {
		text, _, ok = strings.Cut(text, "`")
	}
	if !ok {
		t.Fatalf("%s: no `const schema` string in %s", sarifSchemaModule, sarifSchemaFile)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: the schema is not JSON: %v", sarifSchemaModule, err)
	}
	if m, _ := doc.(map[string]any); m["id"] != sarifSchemaID {
		t.Fatalf("%s: schema id %v, want %s", sarifSchemaModule, m["id"], sarifSchemaID)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(sarifSchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(sarifSchemaID)
	if err != nil {
		t.Fatalf("compile the SARIF schema: %v", err)
	}
	return sch
}

// TestIntegrationSARIFSchema validates `-o sarif` against the official SARIF 2.1.0 JSON schema: a
// run with findings and suppressed findings, a run with unreadable input, an error-only run and a
// clean run. The schema's module is downloaded through the Go module proxy (well under a second).
func TestIntegrationSARIFSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("the SARIF schema is fetched through the module cache; skipped with -short")
	}
	sch := officialSARIFSchema(t)

	suppressed := mixedReport(t)
	if len(suppressed.Findings) > 0 {
		f := suppressed.Findings[0]
		f.Suppressed = &Suppression{Kind: "annotation", Reason: "we know"}
		suppressed.Suppressed = append(suppressed.Suppressed, f)
	}
	partial, _ := Parse("partial.yaml", []byte("kind: Deployment\nmetadata: {name: x\n---\n"+
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: y}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: i}]\n"))
	reports := map[string]*Report{
		"findings and suppressed": suppressed,
		"unreadable input":        NewReport(partial, Config{}, Warning),
		"error only":              ErrorReport(errors.New("no manifest files or directories given"), Warning),
		"clean":                   NewReport(&Inventory{}, Config{}, Warning),
	}
	for name, rep := range reports {
		rep.Version = "v0.0.0-test"
		var buf bytes.Buffer
		if err := WriteSARIF(&buf, rep); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(&buf)
		if err != nil {
			t.Fatalf("%s: SARIF is not JSON: %v", name, err)
		}
		if err := sch.Validate(doc); err != nil {
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				out, _ := json.MarshalIndent(ve.DetailedOutput(), "", "  ")
				t.Errorf("%s: SARIF does not validate against the 2.1.0 schema:\n%s", name, out)
				continue
			}
			t.Errorf("%s: %v", name, err)
		}
	}

	// The schema has teeth: a result with a level SARIF does not define is rejected.
	bad := map[string]any{"version": "2.1.0", "runs": []any{map[string]any{
		"tool":    map[string]any{"driver": map[string]any{"name": "probegate"}},
		"results": []any{map[string]any{"message": map[string]any{"text": "x"}, "level": "fatal"}},
	}}}
	if err := sch.Validate(bad); err == nil {
		t.Error("a result with level \"fatal\" validated; the schema is not being applied")
	}
}
