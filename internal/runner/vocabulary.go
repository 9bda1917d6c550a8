package runner

import (
	"github.com/probegate/probegate/fixtures/target/config"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
)

// paramChecker is implemented by fault builders that can check a fault's parameters up front.
type paramChecker interface {
	CheckParams(faultType string, params map[string]string) error
}

// Vocabulary is what scenario files may name: the registered verdict rules (with their parameter
// checks), the bundled target's variants and faults' types (nil: unchecked).
func Vocabulary(faults FaultBuilder) scenario.Vocabulary {
	v := scenario.Vocabulary{
		Rules:      verdict.Names(),
		RuleParams: verdict.CheckParams,
		Tolerances: func(rule string, params map[string]string) []string {
			var set []string
			for _, name := range verdict.ToleranceParams(rule) {
				if v, ok := params[name]; ok && !verdict.IsZeroParam(v) {
					set = append(set, name)
				}
			}
			return set
		},
		Defaults: verdict.Defaults(),
		Variants: config.Names(),
		OracleParams: func(p map[string]string) error {
			_, err := oracle.ParseOptions(p)
			return err
		},
	}
	if faults != nil {
		v.Faults = faults.Types()
		if pc, ok := faults.(paramChecker); ok {
			v.FaultParams = pc.CheckParams
		}
	}
	return v
}
