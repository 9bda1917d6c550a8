// Package version names the probegate build: reports, SARIF and JSON output carry it.
package version

import (
	"os"
	"runtime/debug"
)

// String is the probegate version: $PROBEGATE_VERSION when set, else the module version the
// binary was built from ("devel" for a plain go build), with the VCS revision when stamped.
func String() string {
	if v := os.Getenv("PROBEGATE_VERSION"); v != "" {
		return v
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	return v
}
