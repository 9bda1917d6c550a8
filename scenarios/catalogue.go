// Package scenarios is probegate's scenario catalogue: one YAML file per scenario (what to break,
// under which load, and which verdicts must then hold) plus the mutation matrix. The files are
// embedded so the probegate binary carries them; the e2e-framework suite in this directory runs each
// scenario as a feature.
package scenarios

import (
	"embed"
	"io/fs"

	"github.com/probegate/probegate/internal/scenario"
)

//go:embed *.yaml
var files embed.FS

// Dir is how the catalogue's files are named in errors.
const Dir = "scenarios"

// FS returns the embedded catalogue files.
func FS() fs.FS { return files }

// Load reads and validates the embedded catalogue and its mutation matrix against vocab.
func Load(vocab scenario.Vocabulary) (*scenario.Catalogue, *scenario.Matrix, error) {
	c, err := scenario.LoadCatalogue(files, ".", Dir, vocab)
	if err != nil {
		return nil, nil, err
	}
	m, err := scenario.LoadMatrix(files, ".", Dir, c, vocab)
	if err != nil {
		return nil, nil, err
	}
	return c, m, nil
}
