package deploy

import (
	"testing"

	"github.com/probegate/probegate/internal/frontdoor"
	"github.com/probegate/probegate/internal/scenario"
)

// The gateway fixture's target file reads, and its HTTPRoute routes the load to the target Service.
func TestGatewayFixtureLoads(t *testing.T) {
	spec, err := scenario.LoadTargetSpec("../../fixtures/gateway/good.target.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app, err := LoadApp(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if app.Door != (frontdoor.Route{Kind: scenario.FrontDoorGateway, HTTPRoute: "target", Host: "shop.example"}) {
		t.Errorf("door %+v", app.Door)
	}
	if app.Port.Name != "http" || app.Port.Port != 8080 {
		t.Errorf("port %+v", app.Port)
	}
}
