package loadgen

import (
	"strings"

	"github.com/probegate/probegate/internal/timeline"
)

// classify maps a vegeta result's status code and error text to an error class. vegeta reports
// transport errors only as text (the error's message), so the match is on the messages Go's net and
// net/http packages produce.
func classify(code int, errText string) timeline.ErrorClass {
	switch {
	case code >= 500:
		return timeline.ErrHTTP5xx
	case code != 0 && (code < 200 || code >= 400):
		return timeline.ErrHTTPOther
	case errText == "":
		if code == 0 {
			return timeline.ErrOther // no status and no error: nothing was received
		}
		return timeline.ErrNone
	}
	e := strings.ToLower(errText)
	switch {
	case strings.Contains(e, "connection refused"):
		return timeline.ErrRefused
	case strings.Contains(e, "timeout") || strings.Contains(e, "deadline exceeded"):
		return timeline.ErrTimeout
	case strings.Contains(e, "connection reset"),
		strings.Contains(e, "broken pipe"),
		strings.Contains(e, "eof"),
		strings.Contains(e, "server closed"),
		strings.Contains(e, "connection closed"),
		strings.Contains(e, "use of closed network connection"):
		return timeline.ErrReset
	}
	return timeline.ErrOther
}
