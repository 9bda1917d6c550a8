package frontdoor

import "github.com/probegate/probegate/internal/scenario"

// kube-proxy: the load reaches the pods through a NodePort Service with the target Service's
// selector (probegate-load); kube-proxy picks a pod per connection. The door deploys nothing and
// keeps no record: the node's conntrack table names the pod of each connection (the runner).
func init() {
	Register(Definition{
		Kind:    scenario.FrontDoorKubeProxy,
		Doc:     "a NodePort Service with the target Service's selector: kube-proxy picks the pod of each connection",
		Resolve: func(Input) (Route, error) { return Route{}, nil },
	})
}
