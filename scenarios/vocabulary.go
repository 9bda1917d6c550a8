package scenarios

import (
	"github.com/probegate/probegate/fixtures/target/config"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
)

// Vocabulary is what scenario files may name: the registered verdict rules and faults (with their
// parameter checks) and the bundled target's variants.
func Vocabulary() scenario.Vocabulary {
	return scenario.Vocabulary{
		Rules:      verdict.Names(),
		RuleParams: verdict.CheckParams,
		Tolerances: verdict.TolerancesSet,
		Defaults:   verdict.Defaults(),
		Variants:   config.Names(),
		OracleParams: func(p map[string]string) error {
			_, err := oracle.ParseOptions(p)
			return err
		},
		Faults:      faults.Types(),
		FaultParams: faults.CheckParams,
	}
}
