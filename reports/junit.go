package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/verdict"
)

// JUnit XML in the shape CI systems commonly consume: <testsuites> holding one <testsuite> per
// scenario and one <testcase> per verdict. A failed verdict carries a <failure> whose message
// states the rule, the expected window and what was observed; an inconclusive one an
// <error type="inconclusive"> saying what could not be shown (red on CI dashboards, never
// "skipped"); a scenario the harness could not finish gets one <testcase name="harness"> with an
// <error type="harness-error">.

// JUnitSuites is the <testsuites> root.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one scenario.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []JUnitProperty `xml:"properties>property,omitempty"`
	Cases      []JUnitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

// JUnitProperty is a name/value pair of a suite.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one verdict.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitProblem `xml:"failure,omitempty"`
	Error     *JUnitProblem `xml:"error,omitempty"`
	Skipped   *JUnitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitSkipped is a <skipped>: a verdict of a scenario the target does not take.
type JUnitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnitProblem is a <failure> or <error>.
type JUnitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit converts the report to JUnit XML structures.
func JUnit(r *Report) JUnitSuites {
	root := JUnitSuites{Name: "probegate"}
	var total time.Duration
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		suite := JUnitSuite{
			Name: suiteName(s),
			Time: seconds(s.Duration()),
		}
		if !s.Started.IsZero() {
			suite.Timestamp = s.Started.UTC().Format("2006-01-02T15:04:05")
		}
		for _, p := range [][2]string{
			{"scenario", s.Name}, {"variant", s.Variant}, {"target", s.Target},
			{"seed", strconv.FormatInt(s.Seed, 10)}, {"replay", s.Replay},
			{"probegate.version", r.ProbegateVersion}, {"kubernetes.version", r.KubernetesVersion},
			{"timeline", s.TimelinePath}, {"requests", s.RequestsPath},
		} {
			if p[1] != "" {
				suite.Properties = append(suite.Properties, JUnitProperty{Name: p[0], Value: p[1]})
			}
		}
		class := "probegate." + suite.Name
		for _, v := range s.Verdicts {
			c := JUnitCase{Name: caseName(v), Classname: class, Time: "0.000"}
			switch v.Status {
			case verdict.Fail:
				c.Failure = &JUnitProblem{Message: FailureMessage(v), Type: v.Rule, Text: failureText(s, v)}
				suite.Failures++
			case verdict.Inconclusive:
				c.Error = &JUnitProblem{Message: InconclusiveMessage(v), Type: "inconclusive", Text: inconclusiveText(v)}
				suite.Errors++
			case verdict.NotApplicable:
				c.Skipped = &JUnitSkipped{Message: "not applicable: " + s.NotApplicable}
				suite.Skipped++
			default:
				c.SystemOut = "expected: " + v.Expected + "\nobserved: " + v.Observed
			}
			suite.Cases = append(suite.Cases, c)
		}
		if len(s.Verdicts) == 0 && s.Error == "" && s.NotApplicable == "" {
			// No verdict is INCONCLUSIVE (Status), never a PASS: without this case a JUnit-only CI
			// would count an empty, green suite.
			msg := "INCONCLUSIVE: the scenario produced no verdict, so nothing was shown"
			suite.Cases = append(suite.Cases, JUnitCase{
				Name: "verdicts", Classname: class, Time: seconds(s.Duration()),
				Error: &JUnitProblem{Message: msg, Type: "inconclusive", Text: msg},
			})
			suite.Errors++
		}
		if s.Error != "" {
			suite.Cases = append(suite.Cases, JUnitCase{
				Name: "harness", Classname: class, Time: seconds(s.Duration()),
				Error: &JUnitProblem{Message: s.Error, Type: "harness-error", Text: s.Error},
			})
			suite.Errors++
		}
		suite.Tests = len(suite.Cases)
		root.Tests += suite.Tests
		root.Failures += suite.Failures
		root.Errors += suite.Errors
		root.Skipped += suite.Skipped
		total += s.Duration()
		root.Suites = append(root.Suites, suite)
	}
	if run := r.Finished.Sub(r.Started); run > total {
		total = run
	}
	root.Time = seconds(total)
	return root
}

// WriteJUnit writes the report as JUnit XML.
func WriteJUnit(w io.Writer, r *Report) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(JUnit(r)); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}

// FailureMessage is the one-line statement of a failed verdict: rule, expectation, observation.
func FailureMessage(v verdict.Result) string {
	msg := v.Rule + ": expected " + v.Expected + "; observed " + v.Observed
	if v.At != nil {
		msg += " (at " + Offset(*v.At) + ")"
	}
	return msg
}

// InconclusiveMessage is an inconclusive verdict in one line: the rule and what could not be shown.
func InconclusiveMessage(v verdict.Result) string {
	why := strings.Join(v.Unshown, "; ")
	if why == "" {
		why = v.Observed
	}
	return v.Rule + ": could not be shown: " + why
}

func inconclusiveText(v verdict.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nrule:     %s\nexpected: %s\nobserved: %s\n", v.Title, v.Rule, v.Expected, v.Observed)
	for _, u := range v.Unshown {
		fmt.Fprintf(&b, "unshown:  %s\n", u)
	}
	return b.String()
}

func failureText(s *ScenarioReport, v verdict.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nrule:     %s\nexpected: %s\nobserved: %s\n", v.Title, v.Rule, v.Expected, v.Observed)
	if v.At != nil {
		fmt.Fprintf(&b, "at:       %s\n", Offset(*v.At))
	}
	for _, c := range v.Caveats {
		fmt.Fprintf(&b, "caveat:   %s\n", c)
	}
	for _, e := range v.Evidence {
		fmt.Fprintf(&b, "evidence: %s\n", evidenceLine(s, e))
	}
	if s.Replay != "" {
		fmt.Fprintf(&b, "replay:   %s\n", s.Replay)
	}
	return b.String()
}

func suiteName(s *ScenarioReport) string {
	if s.Variant == "" {
		return s.Name
	}
	return s.Name + "/" + s.Variant
}

func caseName(v verdict.Result) string {
	if v.Title == "" {
		return v.Rule
	}
	return v.Rule + ": " + v.Title
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// Offset formats an offset from the timeline's start as "+47.0 s".
func Offset(d time.Duration) string {
	return "+" + strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// evidenceLine points at what decided a verdict: a timeline entry or a request, with its offset.
func evidenceLine(s *ScenarioReport, e verdict.Evidence) string {
	where := Offset(e.T)
	switch {
	case e.Seq != 0:
		where = fmt.Sprintf("%s seq %d", orDefault(s.TimelinePath, TimelineFile), e.Seq) + " " + where
	case e.RequestSeq != 0:
		where = fmt.Sprintf("%s seq %d", orDefault(s.RequestsPath, RequestsFile), e.RequestSeq) + " " + where
	}
	if e.Note == "" {
		return where
	}
	return where + ": " + e.Note
}

// shortEvidenceLine is evidenceLine for a page that already links the scenario's files:
// "timeline #15 · +47.0 s: note".
func shortEvidenceLine(e verdict.Evidence) string {
	where := Offset(e.T)
	switch {
	case e.Seq != 0:
		where = fmt.Sprintf("timeline #%d · %s", e.Seq, where)
	case e.RequestSeq != 0:
		where = fmt.Sprintf("request #%d · %s", e.RequestSeq, where)
	}
	if e.Note == "" {
		return where
	}
	return where + ": " + e.Note
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
