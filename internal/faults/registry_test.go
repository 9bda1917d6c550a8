package faults

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/probegate/probegate/internal/timeline"
)

func TestCheckParams(t *testing.T) {
	for _, tc := range []struct {
		typ    string
		params map[string]string
		bad    string // substring of the error; "" for valid
	}{
		{TypeDBLatency, map[string]string{"latency": "2000ms"}, ""},
		{TypeDBLatency, map[string]string{"latency": "2 s"}, "latency"},
		{TypeDBLatency, map[string]string{"delay": "2s"}, `unknown parameter "delay"`},
		{TypeColdStart, nil, "bootstrap is required"},
		{TypeColdStart, map[string]string{"bootstrap": "25s", "restore": "maybe"}, "restore"},
		{TypeOverload, map[string]string{"rate": "400"}, ""},
		{TypeOverload, map[string]string{"rate": "-1"}, "positive"},
		{TypePodDelete, map[string]string{"pod": "random", "grace": "5s"}, ""},
		{"earthquake", nil, "unknown fault type"},
	} {
		err := CheckParams(tc.typ, tc.params)
		if tc.bad == "" && err != nil {
			t.Errorf("CheckParams(%s, %v) = %v", tc.typ, tc.params, err)
		}
		if tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("CheckParams(%s, %v) = %v, want an error about %s", tc.typ, tc.params, err, tc.bad)
		}
	}
}

func TestBuildSkipsWhatTheTargetCannotTake(t *testing.T) {
	env := Env{Client: fakeTarget(), Namespace: "ns", Selector: "app=target", Timeline: timeline.New(time.Now())}
	skipped := 0
	for _, d := range Definitions() {
		f, skip, err := Build(Spec{Type: d.Type, Params: requiredParams(d)}, env)
		if !skips(d) {
			continue
		}
		skipped++
		if err != nil || f != nil || skip == "" {
			t.Errorf("%s on a bare target: fault %v, skip %q, err %v; want a skip", d.Type, f, skip, err)
		}
	}
	if skipped == 0 {
		t.Fatal("no registered fault needs anything a bare target lacks")
	}
	env.ToxiproxyURL, env.DBProxy = "http://10.0.0.9:8474", "postgres"
	if _, _, err := Build(Spec{Type: TypeDBDown}, env); err == nil {
		t.Error("a non-loopback toxiproxy URL was accepted")
	}
	// No loopback URL (a remote cluster): the API is port-forwarded to, so the fault is not skipped;
	// with no toxiproxy pod to forward to, it fails to build, saying so.
	env.ToxiproxyURL, env.ToxiproxyAPIPort, env.Config = "", 8474, &rest.Config{Host: "https://127.0.0.1:6443"}
	if _, skip, err := Build(Spec{Type: TypeDBDown}, env); skip != "" || err == nil || !strings.Contains(err.Error(), "toxiproxy API") {
		t.Errorf("db-down with a port-forwarded toxiproxy API and no toxiproxy pod: skip %q, err %v", skip, err)
	}
	env.ToxiproxyAPIPort, env.Config = 0, nil
	env.ToxiproxyURL, env.AdminPort, env.Deployment = "http://127.0.0.1:18474", 9090, "target"
	env.Config = &rest.Config{Host: "https://127.0.0.1:6443"}
	env.NodeProcs = ExecProcs(func(context.Context, string, ...string) ([]byte, error) { return nil, errors.New("unused") })
	env.PauseNode = func(context.Context, string, bool) error { return errors.New("unused") }
	env.SchedulableNodes = 2
	specs := map[string]Spec{
		TypeDBLatency: {Type: TypeDBLatency, Params: map[string]string{"latency": "2s"}},
		TypeStall:     {Type: TypeStall, Duration: 25 * time.Second, Params: map[string]string{"pod": "random"}},
		TypePodDelete: {Type: TypePodDelete, Params: map[string]string{"grace": "5s"}},
		TypeOverload:  {Type: TypeOverload, Params: map[string]string{"rate": "400"}},
	}
	for _, d := range Definitions() {
		spec, ok := specs[d.Type]
		if !ok {
			spec = Spec{Type: d.Type, Params: requiredParams(d)}
		}
		f, skip, err := Build(spec, env)
		if err != nil || skip != "" || f == nil || f.Type() != spec.Type {
			t.Errorf("Build(%+v): fault %v, skip %q, err %v", spec, f, skip, err)
		}
		if s, ok := f.(*Stall); ok && s.For != 25*time.Second {
			t.Errorf("stall length %v, want the fault's duration", s.For)
		}
		if d, ok := f.(*PodDelete); ok && (d.Grace == nil || *d.Grace != 5*time.Second) {
			t.Errorf("pod-delete grace %v", d.Grace)
		}
	}
	if _, _, err := Build(Spec{Type: TypeOverload, Params: map[string]string{"rate": "x"}}, env); err == nil {
		t.Error("bad params were built")
	}
}

// requiredParams returns a valid value for each of d's required parameters.
func requiredParams(d Definition) map[string]string {
	sample := map[ParamKind]string{KindDuration: "5s", KindNumber: "400", KindBool: "true", KindPod: "random", KindString: "x"}
	out := map[string]string{}
	for _, p := range d.Params {
		if p.Required {
			out[p.Name] = sample[p.Kind]
		}
	}
	return out
}

// skips reports whether d needs a capability a target can lack.
func skips(d Definition) bool {
	for _, c := range d.Needs {
		if c.missing != nil {
			return true
		}
	}
	return false
}

func TestRegistryIsConsistent(t *testing.T) {
	types := Types()
	if len(types) == 0 || !sort.StringsAreSorted(types) {
		t.Fatalf("types = %v", types)
	}
	for _, typ := range types {
		d, ok := Lookup(typ)
		if !ok || d.Type != typ {
			t.Errorf("Lookup(%s) = %+v, %v", typ, d, ok)
		}
		if err := CheckParams(typ, requiredParams(d)); err != nil && d.Check == nil {
			t.Errorf("%s with its required parameters: %v", typ, err)
		}
		for _, p := range d.Params {
			if p.Required {
				if err := CheckParams(typ, nil); err == nil || !strings.Contains(err.Error(), "required") {
					t.Errorf("%s without %s: %v, want it required", typ, p.Name, err)
				}
			}
		}
	}
	if !Explains(TypePodDelete, timeline.CauseDeletion) || !Explains(TypeEvict, timeline.CauseEviction) ||
		Explains(TypeEvict, timeline.CauseDeletion) || Explains(TypeDBLatency, timeline.CauseLiveness) || Explains("nope", timeline.CauseDeletion) {
		t.Error("Explains does not follow the registered restart causes")
	}
}

// unregister removes a type registered by a test.
func unregister(typ string) {
	registryMu.Lock()
	defer registryMu.Unlock()
	delete(registry, typ)
}

// TestAddingAFaultIsOneRegistration registers a fault type the way a fault file does, and finds it
// everywhere the package derives from the registry: Types, CheckParams, Build's skips, Explains.
func TestAddingAFaultIsOneRegistration(t *testing.T) {
	const typ = "test-quake"
	Register(Definition{
		Type:     typ,
		Doc:      "shakes the node",
		Params:   []Param{{Name: "magnitude", Kind: KindNumber, Required: true, Doc: "Richter"}, podParam},
		Needs:    []Capability{NeedsNodeAccess},
		Proof:    "the seismograph",
		Explains: []timeline.RestartCause{timeline.CauseAppExit},
		Build: func(a Args) (Fault, error) {
			return NewPodDelete(a.Rec, a.Pods, nil), nil
		},
	})
	t.Cleanup(func() { unregister(typ) })

	if !slices.Contains(Types(), typ) {
		t.Fatalf("types %v lack %s", Types(), typ)
	}
	if err := CheckParams(typ, nil); err == nil || err.Error() != "fault test-quake: parameter magnitude is required" {
		t.Errorf("missing magnitude: %v", err)
	}
	if err := CheckParams(typ, map[string]string{"magnitude": "7", "depth": "1"}); err == nil ||
		err.Error() != `fault test-quake: unknown parameter "depth" (known: magnitude, pod)` {
		t.Errorf("unknown param: %v", err)
	}
	spec := Spec{Type: typ, Params: map[string]string{"magnitude": "7"}}
	if f, skip, err := Build(spec, Env{}); f != nil || err != nil || skip != "no access to the pod's node: neither a local kind node container nor probegate's node agent" {
		t.Errorf("without node access: fault %v, skip %q, err %v", f, skip, err)
	}
	env := Env{NodeProcs: AgentProcs{}}
	if f, skip, err := Build(spec, env); f == nil || err != nil || skip != "" {
		t.Errorf("with node access: fault %v, skip %q, err %v", f, skip, err)
	}
	if !Needs(typ, NeedsNodeAccess) || Needs(typ, NeedsToxiproxy) || Needs("nope", NeedsNodeAccess) || !Needs(TypeFreeze, NeedsNodeAccess) {
		t.Error("Needs does not follow the registered capabilities")
	}
	if !Explains(typ, timeline.CauseAppExit) {
		t.Error("the registered restart cause is not explained")
	}
}

func TestRegisterRefusesMalformedDefinitions(t *testing.T) {
	build := func(Args) (Fault, error) { return nil, nil }
	for name, d := range map[string]Definition{
		"duplicate":      {Type: TypeStall, Doc: "d", Proof: "p", Build: build},
		"no builder":     {Type: "test-x", Doc: "d", Proof: "p"},
		"no proof":       {Type: "test-x", Doc: "d", Build: build},
		"param twice":    {Type: "test-x", Doc: "d", Proof: "p", Build: build, Params: []Param{podParam, podParam}},
		"undocumented p": {Type: "test-x", Doc: "d", Proof: "p", Build: build, Params: []Param{{Name: "a", Kind: KindBool}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					unregister("test-x")
					t.Errorf("%s: registered", name)
				}
			}()
			Register(d)
		}()
	}
}

// overload takes a rate or a multiple of the target's capacity, and refuses neither.
func TestOverloadRateOrCapacity(t *testing.T) {
	for _, tc := range []struct {
		params map[string]string
		ok     bool
	}{
		{map[string]string{"rate": "400"}, true},
		{map[string]string{ParamCapacityMultiple: "2"}, true},
		{map[string]string{}, false},
		{map[string]string{ParamCapacityMultiple: "-1"}, false},
	} {
		err := CheckParams(TypeOverload, tc.params)
		if (err == nil) != tc.ok {
			t.Errorf("%v: %v", tc.params, err)
		}
	}
}
