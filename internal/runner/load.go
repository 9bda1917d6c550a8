package runner

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
)

// loadProtocol is one protocol the host load speaks to the target's port. Each registers itself
// in its own file (load_http.go, load_grpc.go), as fault types and workload kinds do; nothing else
// in the runner switches on the protocol.
type loadProtocol struct {
	Name  string // the target file's protocol (scenario.LoadHTTP, …)
	Doc   string // what the load sends, one sentence
	Start func(ctx context.Context, spec loadSpec, tl *timeline.Timeline, log *slog.Logger) (loadRun, error)
}

var loadProtocols = map[string]loadProtocol{}

// registerLoad adds a protocol; it panics on a duplicate or malformed one (init time).
func registerLoad(p loadProtocol) {
	if p.Name == "" || p.Doc == "" || p.Start == nil {
		panic(fmt.Sprintf("runner: load protocol %q needs a name, a doc and a starter", p.Name))
	}
	if _, dup := loadProtocols[p.Name]; dup {
		panic(fmt.Sprintf("runner: load protocol %q registered twice", p.Name))
	}
	loadProtocols[p.Name] = p
}

// loadProtocolNames lists the registered protocols, sorted.
func loadProtocolNames() []string { return slices.Sorted(maps.Keys(loadProtocols)) }

// hostLoad drives the load from this process in the spec's protocol (HTTP when it names none).
type hostLoad struct {
	Logger *slog.Logger
}

// Start implements loadStarter.
func (h hostLoad) Start(ctx context.Context, spec loadSpec, tl *timeline.Timeline) (loadRun, error) {
	name := spec.Protocol
	if name == "" {
		name = scenario.LoadHTTP
	}
	p, ok := loadProtocols[name]
	if !ok {
		return nil, fmt.Errorf("no %s load: the load speaks %s", name, strings.Join(loadProtocolNames(), ", "))
	}
	log := h.Logger
	if log == nil {
		log = slog.Default()
	}
	return p.Start(ctx, spec, tl, log)
}
