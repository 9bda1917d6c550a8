package runner

import (
	"testing"

	"github.com/probegate/probegate/internal/timeline"
)

func TestReadyEndpointsFromTimeline(t *testing.T) {
	ready := &timeline.EndpointState{Ready: true, Serving: true}
	term := &timeline.EndpointState{Serving: true, Terminating: true}
	entries := []timeline.Entry{
		{Kind: timeline.KindEndpoint, Pod: "a", Endpoint: &timeline.EndpointTransition{Change: timeline.EndpointAdded, To: ready}},
		{Kind: timeline.KindEndpoint, Pod: "b", Endpoint: &timeline.EndpointTransition{Change: timeline.EndpointAdded, To: ready}},
		{Kind: timeline.KindEndpoint, Pod: "c", Endpoint: &timeline.EndpointTransition{Change: timeline.EndpointAdded, To: ready}},
		{Kind: timeline.KindEndpoint, Pod: "b", Endpoint: &timeline.EndpointTransition{Change: timeline.EndpointChanged, From: ready, To: term}},
		{Kind: timeline.KindEndpoint, Pod: "c", Endpoint: &timeline.EndpointTransition{Change: timeline.EndpointRemoved, From: ready}},
	}
	if n := readyEndpoints(entries); n != 1 {
		t.Fatalf("ready endpoints = %d, want 1", n)
	}
}
