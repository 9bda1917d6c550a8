package lint

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Severity ranks a finding. The zero value is Info.
type Severity int

// Severities, least to most severe.
const (
	Info    Severity = iota // worth knowing; never fails a run by default
	Warning                 // likely to misbehave under some failure; fails a run by default
	Error                   // wrong under a failure the harness can reproduce, or rejected by the API
)

// SeverityNone is a --fail-on threshold above every severity: nothing fails the run.
const SeverityNone Severity = Error + 1

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	case SeverityNone:
		return "none"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// ParseSeverity reads "info", "warning", "error" or "none" (a threshold nothing reaches).
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "info":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "error":
		return Error, nil
	case "none", "never":
		return SeverityNone, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning, error or none)", s)
}

// MarshalJSON writes the severity's name.
func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads a severity's name.
func (s *Severity) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return err
	}
	v, err := ParseSeverity(name)
	if err != nil {
		return err
	}
	*s = v
	return nil
}
