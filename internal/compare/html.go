package compare

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
)

//go:embed compare.html.tmpl
var htmlTemplate string

var page = template.Must(template.New("compare").Funcs(template.FuncMap{
	"status": statusTrend,
	"change": changeWords,
	"values": valueTrend,
	"bound":  boundWords,
	"flag":   verdictFlag,
	"chart":  newChart,
	"inc":    func(i int) int { return i + 1 },
}).Parse(htmlTemplate))

// WriteHTML writes the comparison as one self-contained page: per scenario a table of its
// verdicts, each quantity drawn as one bar per run with its bound as a line.
func WriteHTML(w io.Writer, c *Comparison) error {
	data := struct {
		*Comparison
		Threshold string
		Summary   string
	}{c, thresholdWords(c.Thresholds), Summary(c)}
	if err := page.Execute(w, data); err != nil {
		return fmt.Errorf("render comparison page: %w", err)
	}
	return nil
}

// chart is a quantity drawn as bars, one per run (the NEW run last), on a common scale with its
// bound as a vertical line.
type chart struct {
	Width, Height int
	Bars          []bar
	// BoundX is where the bound's line is drawn, when HasBound.
	BoundX   float64
	HasBound bool
}

type bar struct {
	Y, W  float64
	Label string
	Class string // old, new, drift, none
}

const (
	chartWidth = 160.0
	barHeight  = 9.0
	barGap     = 3.0
)

func newChart(q *Quantity) *chart {
	if q == nil {
		return nil
	}
	top := 0.0
	for _, v := range q.Values {
		if v != nil {
			top = max(top, *v)
		}
	}
	var bound *float64
	if q.Bounded() {
		for _, b := range q.Bounds {
			if b != nil {
				bound = b
			}
		}
		if bound != nil {
			top = max(top, *bound)
		}
	}
	if top <= 0 {
		top = 1
	}
	scale := chartWidth / (top * 1.05)
	c := &chart{Width: int(chartWidth) + 2, Height: int(float64(len(q.Values))*(barHeight+barGap) + barGap)}
	for i, v := range q.Values {
		b := bar{Y: barGap + float64(i)*(barHeight+barGap), Class: "old", Label: "—"}
		if i == len(q.Values)-1 {
			b.Class = "new"
			if q.Drift {
				b.Class = "drift"
			}
		}
		if v == nil {
			b.Class = "none"
		} else {
			b.W = max(*v*scale, 1)
			b.Label = Format(*v, q.Unit)
		}
		c.Bars = append(c.Bars, b)
	}
	if bound != nil {
		c.BoundX, c.HasBound = *bound*scale+1, true
	}
	return c
}
