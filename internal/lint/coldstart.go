package lint

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// The verdict rule and figure in a probegate report.json that measure a cold start: the slowest
// time from pod creation to first ready, in seconds, among the pods the scenario saw boot.
const (
	coldStartVerdict = "startup-not-killed"
	coldStartFigure  = "slowest_bootstrap_s"
)

// reportColdStart is the part of report.json (reports package, schemaVersion 1) lint reads.
type reportColdStart struct {
	SchemaVersion int `json:"schemaVersion"`
	Scenarios     []struct {
		Name     string `json:"name"`
		Verdicts []struct {
			Rule    string             `json:"rule"`
			Figures map[string]float64 `json:"figures"`
		} `json:"verdicts"`
	} `json:"scenarios"`
}

// ColdStartFromReport reads the slowest measured cold start from a previous run's report.json: the
// largest slowest_bootstrap_s of any startup-not-killed verdict. source describes where it came from.
func ColdStartFromReport(path string) (d time.Duration, source string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, "", &InputError{Pos: Position{File: path}, Msg: fmt.Sprintf("read report: %v", unwrapPathError(err))}
	}
	var rep reportColdStart
	if err := json.Unmarshal(data, &rep); err != nil {
		return 0, "", &InputError{Pos: Position{File: path}, Msg: fmt.Sprintf("not a probegate report.json: %v", err)}
	}
	if rep.SchemaVersion == 0 {
		return 0, "", &InputError{Pos: Position{File: path}, Msg: "not a probegate report.json: no schemaVersion"}
	}
	var best float64
	var from string
	for _, s := range rep.Scenarios {
		for _, v := range s.Verdicts {
			if v.Rule != coldStartVerdict {
				continue
			}
			if x, ok := v.Figures[coldStartFigure]; ok && x > best {
				best, from = x, s.Name
			}
		}
	}
	if best <= 0 {
		return 0, "", &InputError{Pos: Position{File: path}, Msg: fmt.Sprintf("report holds no measured cold start (no %s verdict with figure %s)", coldStartVerdict, coldStartFigure)}
	}
	d = time.Duration(best * float64(time.Second)).Round(100 * time.Millisecond)
	return d, fmt.Sprintf("measured in %s, scenario %s", path, from), nil
}
