package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: any input either parses (and lints without panicking) or fails with one InputError line
// naming the file.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*", "*", "*.yaml"))
	more, _ := filepath.Glob(filepath.Join("testdata", "*", "*.yaml"))
	for _, p := range append(seeds, more...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("--- {apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: Pod, metadata: {name: a}}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := Parse("f.yaml", data)
		if err != nil {
			if !IsInputError(err) {
				t.Fatalf("error is not an InputError: %v", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "f.yaml") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q does not name the file on one line", msg)
			}
			return
		}
		for _, fd := range Lint(inv, Config{ColdStart: 1}) {
			if fd.Pos.File != "f.yaml" || fd.Pos.Line < 1 {
				t.Fatalf("finding at %v", fd.Pos)
			}
		}
	})
}
