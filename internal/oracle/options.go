package oracle

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// optionKeys maps a scenario parameter name to the Options field it sets.
var optionKeys = map[string]func(*Options, time.Duration){
	"propagation":       func(o *Options, d time.Duration) { o.Propagation = d },
	"restart-allowance": func(o *Options, d time.Duration) { o.RestartAllowance = d },
	"withdrawal":        func(o *Options, d time.Duration) { o.Withdrawal = d },
	"drain":             func(o *Options, d time.Duration) { o.AdmittedWork = d },
	"cleanup":           func(o *Options, d time.Duration) { o.Cleanup = d },
	"margin":            func(o *Options, d time.Duration) { o.Margin = d },
	"readiness-lag":     func(o *Options, d time.Duration) { o.ReadinessLag = d },
	"recovery-lag":      func(o *Options, d time.Duration) { o.RecoveryLag = d },
	"liveness-lag":      func(o *Options, d time.Duration) { o.LivenessLag = d },
}

// ParseOptions reads oracle options from scenario parameters: "container" (a name), "tolerance"
// (the reason for a propagation or restart allowance above its default, which it requires), and the
// durations "propagation", "restart-allowance", "withdrawal", "drain", "cleanup", "margin",
// "readiness-lag", "recovery-lag", "liveness-lag" (seconds such as "2.5", or Go durations such as
// "1500ms"). Unknown keys and bad values are errors.
func ParseOptions(params map[string]string) (Options, error) {
	var o Options
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := params[k]
		switch k {
		case "container":
			o.Container = strings.TrimSpace(v)
			continue
		case "tolerance":
			o.Reason = strings.TrimSpace(v)
			continue
		}
		set, ok := optionKeys[k]
		if !ok {
			return Options{}, fmt.Errorf("oracle option %q unknown (known: %s)", k, strings.Join(OptionNames(), ", "))
		}
		d, err := parseSeconds(v)
		if err != nil {
			return Options{}, fmt.Errorf("oracle option %s=%q: %w", k, v, err)
		}
		set(&o, d)
	}
	if l := o.Loosening(); len(l) > 0 && o.Reason == "" {
		return Options{}, fmt.Errorf("oracle option %s widens its allowance past the default by hand: say why in a one-line \"tolerance\" among the oracle options (it is shown beside the verdicts)",
			strings.Join(l, ", "))
	}
	return o, nil
}

// OptionNames lists the keys ParseOptions accepts, sorted.
func OptionNames() []string {
	out := []string{"container", "tolerance"}
	for k := range optionKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
