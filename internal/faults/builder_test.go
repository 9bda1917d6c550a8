package faults

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/probegate/probegate/internal/timeline"
)

func TestCheckParams(t *testing.T) {
	if len(Types()) != 10 {
		t.Fatalf("types = %v", Types())
	}
	if h := ParamHelp(TypeDBLatency); h["latency"] == "" || ParamHelp("nope") != nil {
		t.Fatalf("ParamHelp = %v", h)
	}
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
	for _, typ := range []string{TypeDBLatency, TypeDBDown, TypeStall, TypeFreeze, TypeColdStart, TypeRollingUpdate} {
		params := map[string]string{}
		if typ == TypeColdStart {
			params["bootstrap"] = "5s"
		}
		f, skip, err := Build(Spec{Type: typ, Params: params}, env)
		if err != nil || f != nil || skip == "" {
			t.Errorf("%s on a bare target: fault %v, skip %q, err %v; want a skip", typ, f, skip, err)
		}
	}
	env.ToxiproxyURL, env.DBProxy = "http://10.0.0.9:8474", "postgres"
	if _, _, err := Build(Spec{Type: TypeDBDown}, env); err == nil {
		t.Error("a non-loopback toxiproxy URL was accepted")
	}
	env.ToxiproxyURL, env.AdminPort, env.Deployment = "http://127.0.0.1:18474", 9090, "target"
	env.Config = &rest.Config{Host: "https://127.0.0.1:6443"}
	env.NodeExec = func(context.Context, ...string) ([]byte, error) { return nil, errors.New("unused") }
	for _, spec := range []Spec{
		{Type: TypeDBLatency, Params: map[string]string{"latency": "2s"}},
		{Type: TypeDBTimeout}, {Type: TypeDBDown},
		{Type: TypeStall, Duration: 25 * time.Second, Params: map[string]string{"pod": "random"}},
		{Type: TypeFreeze}, {Type: TypeColdStart, Params: map[string]string{"bootstrap": "25s"}},
		{Type: TypePodDelete, Params: map[string]string{"grace": "5s"}}, {Type: TypeEvict},
		{Type: TypeRollingUpdate}, {Type: TypeOverload, Params: map[string]string{"rate": "400"}},
	} {
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
