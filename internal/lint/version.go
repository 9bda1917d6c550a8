package lint

import "runtime/debug"

// Version is the probegate version the binary was built from ("devel" for a plain go build, with
// the VCS revision when it was stamped), written into SARIF and JSON reports.
func Version() string {
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
