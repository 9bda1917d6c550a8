package reports_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

// jsonSchema is the subset of JSON Schema report.schema.json uses.
type jsonSchema struct {
	Ref                  string                 `json:"$ref"`
	Type                 any                    `json:"type"`
	Const                any                    `json:"const"`
	Enum                 []any                  `json:"enum"`
	Required             []string               `json:"required"`
	Properties           map[string]*jsonSchema `json:"properties"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
	Items                *jsonSchema            `json:"items"`
	MinItems             *int                   `json:"minItems"`
	MinLength            *int                   `json:"minLength"`
	Minimum              *float64               `json:"minimum"`
	Maximum              *float64               `json:"maximum"`
	Defs                 map[string]*jsonSchema `json:"$defs"`
}

func loadSchema(t *testing.T) *jsonSchema {
	t.Helper()
	raw, err := os.ReadFile("schema/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s jsonSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("schema: %v", err)
	}
	return &s
}

// validate checks v (decoded with UseNumber) against s, returning every violation with its path.
func validate(root, s *jsonSchema, v any, path string) []string {
	if s.Ref != "" {
		name := strings.TrimPrefix(s.Ref, "#/$defs/")
		def := root.Defs[name]
		if def == nil {
			return []string{path + ": unresolved $ref " + s.Ref}
		}
		return validate(root, def, v, path)
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if s.Type != nil {
		var types []string
		switch t := s.Type.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, x.(string))
			}
		}
		ok := false
		for _, t := range types {
			ok = ok || isType(v, t)
		}
		if !ok {
			fail("want type %v, got %T", types, v)
			return errs
		}
	}
	if s.Const != nil && fmt.Sprint(s.Const) != fmt.Sprint(v) {
		fail("want const %v, got %v", s.Const, v)
	}
	if s.Enum != nil {
		found := false
		for _, e := range s.Enum {
			found = found || fmt.Sprint(e) == fmt.Sprint(v)
		}
		if !found {
			fail("%v not in %v", v, s.Enum)
		}
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if s.Minimum != nil && f < *s.Minimum || s.Maximum != nil && f > *s.Maximum {
			fail("%v out of range", f)
		}
	}
	if str, ok := v.(string); ok && s.MinLength != nil && len(str) < *s.MinLength {
		fail("string shorter than %d", *s.MinLength)
	}
	if arr, ok := v.([]any); ok {
		if s.MinItems != nil && len(arr) < *s.MinItems {
			fail("fewer than %d items", *s.MinItems)
		}
		if s.Items != nil {
			for i, x := range arr {
				errs = append(errs, validate(root, s.Items, x, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, r := range s.Required {
			if _, ok := obj[r]; !ok {
				fail("missing required %q", r)
			}
		}
		for k, x := range obj {
			if p, ok := s.Properties[k]; ok {
				errs = append(errs, validate(root, p, x, path+"."+k)...)
				continue
			}
			switch ap := strings.TrimSpace(string(s.AdditionalProperties)); {
			case ap == "false":
				fail("property %q not in the schema", k)
			case strings.HasPrefix(ap, "{"):
				var sub jsonSchema
				if err := json.Unmarshal(s.AdditionalProperties, &sub); err != nil {
					fail("bad additionalProperties: %v", err)
				}
				errs = append(errs, validate(root, &sub, x, path+"."+k)...)
			}
		}
	}
	return errs
}

func isType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

func decodeAny(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReportJSONMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	r := reportstest.SampleReport(5)
	r.Scenarios[1].Error = "deploy target: timed out"
	r.Scenarios[1].Verdicts = nil
	r.Scenarios[0].Capacity = &reports.Capacity{Rate: 480, Saturated: true, Steps: []string{"480 rps held"},
		Cap: &reports.CapacityCap{Millicores: 25, Containers: 3, CPUPerRequest: 0.325, Uncapped: reports.Capacity{Rate: 2000}}}
	if r.Scenarios[0].Summary == nil {
		t.Fatal("the sample report's first scenario has no summary")
	}
	r.Scenarios[0].Summary.Door = &reports.DoorPropagation{Withdrawals: 2, Late: 1, Requests: 3, Median: time.Second, Max: 2 * time.Second}
	r.Scenarios[0].Connections = []reports.Connection{
		{Client: 0, Local: "172.18.0.1:40000", Remote: "172.18.0.2:30080", OpenedAt: r.Started, Calls: 40,
			FirstCall: r.Started, LastCall: r.Started.Add(time.Second), Pods: map[string]uint64{"web-0": 40}, Pod: "web-0"},
		{Client: 1, Local: "172.18.0.1:40002", OpenedAt: r.Started, ClosedAt: r.Started.Add(2 * time.Second), Calls: 3},
	}
	dir := t.TempDir()
	if err := reports.WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dir + "/report.json")
	if err != nil {
		t.Fatal(err)
	}
	if errs := validate(schema, schema, decodeAny(t, raw), "$"); len(errs) > 0 {
		t.Errorf("report.json does not match reports/schema/report.schema.json:\n%s", strings.Join(errs, "\n"))
	}
}

func TestSchemaValidatorCatchesViolations(t *testing.T) {
	schema := loadSchema(t)
	var buf bytes.Buffer
	if err := reports.WriteJSON(&buf, reportstest.SampleReport(2)); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	bad := map[string]string{
		"wrong version":    strings.Replace(good, `"schemaVersion": 5`, `"schemaVersion": 1`, 1),
		"unknown field":    strings.Replace(good, `"cluster":`, `"clusterName": "x", "cluster":`, 1),
		"bad status":       strings.Replace(good, `"status": "FAIL"`, `"status": "BROKEN"`, 1),
		"string duration":  strings.Replace(good, `"span": `, `"span": "2m", "x":`, 1),
		"bad direction":    strings.Replace(good, `"direction": "max"`, `"direction": "up"`, 1),
		"unitless measure": strings.Replace(good, `"unit": "s",`, ``, 1),
	}
	for name, doc := range bad {
		if doc == good {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if errs := validate(schema, schema, decodeAny(t, []byte(doc)), "$"); len(errs) == 0 {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}

// jsonFields lists the JSON names of a struct type's fields (following embedded structs).
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func schemaFields(s *jsonSchema) []string {
	var out []string
	for k := range s.Properties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSchemaCoversEveryField keeps the schema in step with the Go types: the reports package's
// own types must match exactly; verdict types (owned by internal/verdict) must at least contain
// every field the schema names.
func TestSchemaCoversEveryField(t *testing.T) {
	schema := loadSchema(t)
	exact := map[string]reflect.Type{
		"":               reflect.TypeOf(reports.Report{}),
		"scenario":       reflect.TypeOf(reports.ScenarioReport{}),
		"summary":        reflect.TypeOf(reports.Summary{}),
		"requestFigures": reflect.TypeOf(reports.RequestFigures{}),
		"podFigures":     reflect.TypeOf(reports.PodFigures{}),
		"faultInterval":  reflect.TypeOf(reports.FaultInterval{}),
		"connection":     reflect.TypeOf(reports.Connection{}),
	}
	for def, typ := range exact {
		s := schema
		if def != "" {
			s = schema.Defs[def]
		}
		if got, want := schemaFields(s), jsonFields(typ); !reflect.DeepEqual(got, want) {
			t.Errorf("schema %q lists %v; %s has %v: update reports/schema/report.schema.json and README.md", def, got, typ, want)
		}
	}
	subset := map[string]reflect.Type{
		"verdict":  reflect.TypeOf(verdict.Result{}),
		"evidence": reflect.TypeOf(verdict.Evidence{}),
		"window":   reflect.TypeOf(verdict.Window{}),
		"measure":  reflect.TypeOf(verdict.Measure{}),
	}
	for def, typ := range subset {
		have := map[string]bool{}
		for _, f := range jsonFields(typ) {
			have[f] = true
		}
		for _, f := range schemaFields(schema.Defs[def]) {
			if !have[f] {
				t.Errorf("schema %q names %q, which %s no longer has", def, f, typ)
			}
		}
	}
	if c := fmt.Sprint(schema.Properties["schemaVersion"].Const); c != fmt.Sprint(reports.SchemaVersion) {
		t.Errorf("schema const schemaVersion %s, package writes %d", c, reports.SchemaVersion)
	}
}
