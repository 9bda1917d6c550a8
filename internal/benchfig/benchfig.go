// Package benchfig prints benchmark figures in the one format `make bench` promises:
//
//	FIGURE <name> <value> <unit> goal <op><value>
//
// so a CI log can be grepped for every speed and memory target in one place.
package benchfig

import (
	"fmt"
	"io"
	"os"
	"strconv"
)

// Out is where figures go (stdout, which `go test -bench` passes through).
var Out io.Writer = os.Stdout

// Print writes one figure line. goal is an operator and bound such as "<=50" or ">=0.99".
func Print(name string, value float64, unit, goal string) {
	fmt.Fprintf(Out, "FIGURE %s %s %s goal %s\n", name, strconv.FormatFloat(value, 'g', 6, 64), unit, goal)
}
