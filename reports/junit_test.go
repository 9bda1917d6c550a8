package reports_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

// junitDoc is an independent reading of the common JUnit XML shape, so the test does not reuse
// the writer's own structs.
type junitDoc struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Fails   int      `xml:"failures,attr"`
	Errors  int      `xml:"errors,attr"`
	Skipped int      `xml:"skipped,attr"`
	Suites  []struct {
		Name    string `xml:"name,attr"`
		Tests   int    `xml:"tests,attr"`
		Fails   int    `xml:"failures,attr"`
		Errors  int    `xml:"errors,attr"`
		Skipped int    `xml:"skipped,attr"`
		Props   []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, r *reports.Report) (junitDoc, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := reports.WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("junit.xml does not parse: %v\n%s", err, buf.String())
	}
	return doc, buf.String()
}

// missingAttrs walks the raw XML and reports, per element named local, which of the attributes
// in names it lacks.
func missingAttrs(t *testing.T, raw, local string, names ...string) (seen int, missing []string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != local {
			continue
		}
		seen++
		for _, n := range names {
			found := false
			for _, a := range se.Attr {
				found = found || a.Name.Local == n
			}
			if !found {
				missing = append(missing, fmt.Sprintf("%s #%d lacks %s", local, seen, n))
			}
		}
	}
	return seen, missing
}

func TestJUnitCountsAndMessages(t *testing.T) {
	r := reportstest.SampleReport(5)
	doc, raw := parseJUnit(t, r)
	if !strings.HasPrefix(raw, "<?xml") {
		t.Error("no XML declaration")
	}
	// Sample: db-slow has 2 FAIL, 1 PASS, 1 INCONCLUSIVE; pod-delete 2 PASS. An inconclusive verdict
	// is an error, never skipped: CI must not show it green.
	if doc.Tests != 6 || doc.Fails != 2 || doc.Skipped != 0 || doc.Errors != 1 {
		t.Errorf("testsuites tests/failures/skipped/errors = %d/%d/%d/%d, want 6/2/0/1", doc.Tests, doc.Fails, doc.Skipped, doc.Errors)
	}
	if len(doc.Suites) != 2 {
		t.Fatalf("suites = %d, want one per scenario", len(doc.Suites))
	}
	s0 := doc.Suites[0]
	if s0.Name != "db-slow/bad-liveness-db" || s0.Tests != 4 || s0.Fails != 2 || s0.Errors != 1 || len(s0.Cases) != 4 {
		t.Errorf("suite 0 = %s tests %d failures %d errors %d cases %d", s0.Name, s0.Tests, s0.Fails, s0.Errors, len(s0.Cases))
	}
	for _, want := range []struct {
		element string
		count   int
		attrs   []string
	}{
		{"testsuites", 1, []string{"name", "tests", "failures", "errors", "time"}},
		{"testsuite", 2, []string{"name", "tests", "failures", "errors", "time"}},
		{"testcase", 6, []string{"name", "classname", "time"}},
	} {
		n, missing := missingAttrs(t, raw, want.element, want.attrs...)
		if n != want.count || len(missing) > 0 {
			t.Errorf("<%s>: %d elements (want %d), missing attributes %v", want.element, n, want.count, missing)
		}
	}
	f := s0.Cases[0].Failure
	if f == nil {
		t.Fatal("first verdict failed but has no <failure>")
	}
	for _, want := range []string{"liveness-ignores-shared-dependency", "expected 0 liveness restarts", "(40 s–80 s)", "observed 6 liveness restarts", "at +47.0 s"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("failure message %q lacks %q", f.Message, want)
		}
	}
	if !strings.Contains(f.Text, "replay:") || !strings.Contains(f.Text, "evidence:") {
		t.Errorf("failure body lacks replay or evidence:\n%s", f.Text)
	}
	if s0.Cases[2].Failure != nil || s0.Cases[2].Error != nil || s0.Cases[2].Skipped != nil {
		t.Error("a passing verdict is marked failed, errored or skipped")
	}
	if e := s0.Cases[3].Error; e == nil || e.Type != "inconclusive" || !strings.Contains(e.Message, "could not be shown: pod-delete was skipped") || s0.Cases[3].Skipped != nil {
		t.Errorf("inconclusive verdict = error %+v skipped %+v", e, s0.Cases[3].Skipped)
	}
	props := map[string]string{}
	for _, p := range s0.Props {
		props[p.Name] = p.Value
	}
	if props["seed"] != "42" || props["variant"] != "bad-liveness-db" || props["kubernetes.version"] != "v1.34.4" {
		t.Errorf("properties = %v", props)
	}
}

func TestJUnitHarnessErrorIsAnError(t *testing.T) {
	r := reportstest.SampleReport(5)
	r.Scenarios[1].Error = "deploy fixture \"good\": timed out waiting for rollout"
	doc, _ := parseJUnit(t, r)
	s1 := doc.Suites[1]
	if s1.Errors != 1 || doc.Errors != 2 || s1.Tests != 3 {
		t.Fatalf("errors suite/total = %d/%d tests %d, want 1/2 (one inconclusive verdict in suite 0) and 3", s1.Errors, doc.Errors, s1.Tests)
	}
	last := s1.Cases[len(s1.Cases)-1]
	if last.Error == nil || !strings.Contains(last.Error.Message, "timed out") {
		t.Errorf("harness case = %+v", last)
	}
}

// A verdict of a scenario the target does not take is <skipped> with the reason, counted as
// skipped, never as a failure or an error.
func TestJUnitNotApplicableIsSkipped(t *testing.T) {
	r := notApplicableSample()
	s := &r.Scenarios[1]
	doc, _ := parseJUnit(t, r)
	s1 := doc.Suites[1]
	if s1.Skipped != len(s.Verdicts) || doc.Skipped != len(s.Verdicts) || s1.Fails != 0 || s1.Errors != 0 {
		t.Fatalf("suite skipped/failures/errors = %d/%d/%d, total skipped %d; want %d/0/0, %d", s1.Skipped, s1.Fails, s1.Errors, doc.Skipped, len(s.Verdicts), len(s.Verdicts))
	}
	for _, c := range s1.Cases {
		if c.Skipped == nil || c.Failure != nil || c.Error != nil {
			t.Errorf("case %s: skipped %+v failure %+v error %+v", c.Name, c.Skipped, c.Failure, c.Error)
		}
	}
	_, raw := parseJUnit(t, r)
	if !strings.Contains(raw, `<skipped message="not applicable: target web declares no dependency">`) {
		t.Errorf("no <skipped> with the reason in:\n%s", raw)
	}
}

// A scenario with no verdict is INCONCLUSIVE (exit 3), so its suite carries an <error
// type="inconclusive"> case: a JUnit-only CI must not see an empty, green suite.
func TestJUnitNoVerdictsIsAnError(t *testing.T) {
	r := reportstest.SampleReport(5)
	r.Scenarios[1].Verdicts = nil
	if st := r.Scenarios[1].Status(); st != verdict.Inconclusive {
		t.Fatalf("status of a scenario with no verdict = %s, want INCONCLUSIVE", st)
	}
	doc, _ := parseJUnit(t, r)
	s1 := doc.Suites[1]
	if s1.Tests != 1 || s1.Errors != 1 || len(s1.Cases) != 1 || doc.Errors != 2 {
		t.Fatalf("suite tests/errors = %d/%d, total errors %d; want 1/1 and 2 (one inconclusive verdict in suite 0)", s1.Tests, s1.Errors, doc.Errors)
	}
	c := s1.Cases[0]
	if c.Name != "verdicts" || c.Error == nil || c.Error.Type != "inconclusive" || !strings.Contains(c.Error.Message, "no verdict") {
		t.Errorf("case = %+v, want an inconclusive error named verdicts", c)
	}

	// A harness error with no verdict is the harness case alone; a scenario the target does not
	// take is not an error.
	r.Scenarios[1].Error = "deploy fixture: timed out"
	if doc, _ = parseJUnit(t, r); len(doc.Suites[1].Cases) != 1 || doc.Suites[1].Cases[0].Name != "harness" {
		t.Errorf("harness error, no verdicts: cases %+v", doc.Suites[1].Cases)
	}
	r.Scenarios[1].Error, r.Scenarios[1].NotApplicable = "", "needs workers"
	if doc, _ = parseJUnit(t, r); doc.Suites[1].Errors != 0 {
		t.Errorf("not applicable, no verdicts: %d errors", doc.Suites[1].Errors)
	}
}

// notApplicableSample is the sample report whose second scenario the target does not take.
func notApplicableSample() *reports.Report {
	r := reportstest.SampleReport(5)
	s := &r.Scenarios[1]
	s.NotApplicable = "target web declares no dependency"
	for i := range s.Verdicts {
		s.Verdicts[i].Status = verdict.NotApplicable
	}
	return r
}
