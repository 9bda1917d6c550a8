package lint

import (
	"fmt"
	"time"
)

func init() {
	register(&Rule{
		ID:       "PG009",
		Name:     "no-withdrawal-delay",
		Severity: Warning,
		Summary:  "nothing holds the process up while its endpoint is withdrawn",
		Explanation: "When a pod is deleted, the EndpointSlice update and SIGTERM start at the same moment " +
			"and race: kube-proxy on every node, and any ingress or load balancer, needs about a second or " +
			"more to stop routing to the pod. A process that exits (or stops accepting) on SIGTERM right away " +
			"refuses the requests that are still routed to it in that window, so every rollout, scale-down " +
			"and node drain costs failed requests. Only containers a Service routes user traffic to are checked " +
			"(metrics ports, by name or as the port the pod's prometheus.io/port annotation names beside " +
			"another, and a StatefulSet's headless peer Service do not count), and not single-replica " +
			"StatefulSets or Recreate Deployments, whose old pod stops before a new one could take over. " +
			"The finding is info when every route to the container carries a protocol of long-lived " +
			"connections (redis, memcached, databases, message brokers, websockets, xDS control planes), named by the Service " +
			"port's appProtocol or by the Service or container port's name (`tcp-redis`, a container port " +
			"`websocket`): those connections are dropped at SIGTERM with or without a delay and their clients " +
			"reconnect, so a delay only spares the few new connections of the propagation window, which " +
			"clients retry. HTTP, gRPC and ports whose protocol the manifest does not name stay warnings. " +
			"The finding is info, too, when only headless Services route to the container (a StatefulSet's " +
			"are not counted at all): with no virtual IP no kube-proxy rule races SIGTERM, and the clients, " +
			"which take the pods' addresses from DNS and pick among them, are mostly scrapers, peers finding " +
			"each other and client-side balancers that connect before they send. " +
			"The finding is info, too, when terminationGracePeriodSeconds is above " + drainGraceText + " and the " +
			"container has no preStop hook to spend it: nothing but the process itself can use minutes after " +
			"SIGTERM, so the manifest says the application handles SIGTERM and drains in-process (a lame-duck " +
			"period, a gradual hand-off of connections); whether that drain keeps accepting new connections for " +
			"the propagation window only the application shows, so the finding keeps its fix but does not fail the run. " +
			"A flag or plain environment variable of the container that sets a wait before shutdown " +
			"(`--shutdown-delay-duration=15s`, `SHUTDOWN_DELAY_SECONDS`, a lame-duck period) is the application's " +
			"withdrawal delay: at or above the propagation there is no finding, below it the finding names the " +
			"setting; a shutdown timeout, which bounds in-flight work once the listener is closed, is no such delay. " +
			"With the default grace period, a server that holds itself up after SIGTERM (some frameworks fail readiness and keep serving for a " +
			"few seconds before they close the listener) looks in the manifest exactly like one that exits at " +
			"once, and so does a Service only scrapers call on a port named http that no prometheus.io/port " +
			"annotation marks: lint cannot tell them apart " +
			"and reports both; declare such a delay with " + AnnotationWithdrawal + " (the harness's timing " +
			"oracle reads it too) or suppress the finding with a reason." + noServiceText,
		Fix: "Add a preStop hook that waits for withdrawal (the native `sleep` action, a few seconds above the " +
			"measured propagation), or keep serving for a withdrawal delay after SIGTERM in the application " +
			"and declare it with annotation " + AnnotationWithdrawal + ".",
		Scenario: "pod-delete-under-load",
		Predicts: []string{"failed-requests-budget", "terminating-before-exit"},
		Check:    checkNoShutdownDelay,
	})
}

// drainGrace is the grace period above which a container without a preStop hook is taken to drain
// in-process after SIGTERM: twice the API default, more than a plain exit or a preStop sleep needs.
const (
	drainGrace     = time.Minute
	drainGraceText = "a minute"
)

// withdrawalSleep is the preStop sleep proposed when none is declared: propagation plus slack for
// ingress controllers and load balancers that watch endpoints more slowly than kube-proxy.
func withdrawalSleep(prop time.Duration) time.Duration {
	d := prop + 3*time.Second
	if d < 5*time.Second {
		d = 5 * time.Second
	}
	return d
}

func checkNoShutdownDelay(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG009")
	if w.Recreate || w.Kind == "StatefulSet" && (w.Replicas == nil || *w.Replicas <= 1) {
		return nil // the old pod stops before a new one exists: there is nowhere to move traffic to
	}
	withdrawal, hasWithdrawal, err := declared(w, AnnotationWithdrawal)
	if err != nil || hasWithdrawal && withdrawal > 0 {
		return nil // declared (an unreadable value is PG015's finding)
	}
	var out []Finding
	for _, c := range w.Containers() {
		if _, has, _ := preStopDelay(c); has {
			continue
		}
		routes := servedRoutes(ctx, w, c)
		if len(routes) == 0 {
			continue // no Service sends it user traffic
		}
		setting, hasSetting := appShutdownDelay(c)
		if hasSetting && setting.Delay >= ctx.propagation(w) {
			continue // the application is told to keep serving past the propagation
		}
		what := "no preStop hook and no " + AnnotationWithdrawal + " annotation"
		if hasWithdrawal {
			what = "no preStop hook and " + AnnotationWithdrawal + " is 0"
		}
		if hasSetting {
			what = fmt.Sprintf("no preStop hook, and %s holds the process up only %s after SIGTERM, under the %s propagation", setting.Setting, fmtDur(setting.Delay), fmtDur(ctx.propagation(w)))
		}
		var f Finding
		grace := gracePeriod(&w.Pod)
		rt, proto, ok := requestRoute(c, routes)
		switch {
		case onlyHeadless(routes):
			f = r.finding(ctx, w, w.AtContainer(c), c.Name, "container %q: %s; %s", c.Name, what, headlessNote(rt))
			f.Severity = Info
		case ok && grace > drainGrace:
			f = r.finding(ctx, w, w.AtContainer(c), c.Name,
				"container %q: %s, though %s routes to it; terminationGracePeriodSeconds is %d, above %s, and only the process can spend it, so the application drains in-process after SIGTERM: declare its delay if the drain keeps accepting for the %s propagation, else add the preStop sleep",
				c.Name, what, rt, seconds32(grace), drainGraceText, fmtDur(ctx.propagation(w)))
			f.Severity = Info
		case ok:
			f = r.finding(ctx, w, w.AtContainer(c), c.Name,
				"container %q: %s, though %s routes to it: it may stop serving while traffic is still routed to it", c.Name, what, rt)
		default:
			f = r.finding(ctx, w, w.AtContainer(c), c.Name,
				"container %q: %s; %s carries %s, long-lived connections that SIGTERM drops with or without a delay and that clients re-establish: a delay would only spare the new connections of the propagation window",
				c.Name, what, rt, proto)
			f.Severity = Info
		}
		f.Message += noServiceNote(ctx, w)
		sleep := withdrawalSleep(ctx.propagation(w))
		f.Fix = fmt.Sprintf("add to container %q: lifecycle: {preStop: {sleep: {seconds: %d}}} (propagation %s + slack), or keep serving %s after SIGTERM in the app and declare %s: \"%d\"",
			c.Name, seconds32(sleep), fmtDur(ctx.propagation(w)), fmtDur(sleep), AnnotationWithdrawal, seconds32(sleep))
		if hasSetting {
			f.Fix = fmt.Sprintf("raise %s to %s (propagation %s + slack), or %s", setting.Setting, fmtDur(sleep), fmtDur(ctx.propagation(w)), f.Fix)
		}
		if grace < sleep+ctx.Config.GraceMargin {
			f.Fix += fmt.Sprintf("; raise terminationGracePeriodSeconds from %d to ≥ %d", seconds32(grace), seconds32(sleep+ctx.Config.GraceMargin))
		}
		out = append(out, f)
	}
	return out
}

// requestRoute returns the first of routes that carries a request protocol (or one the manifest
// does not name), ok true; when every route carries long-lived connections, it returns the first
// route and its protocol, ok false.
func requestRoute(c ContainerRef, routes []route) (rt route, longLived string, ok bool) {
	for _, r := range routes {
		if longLivedProtocol(c, r) == "" {
			return r, "", true
		}
	}
	return routes[0], longLivedProtocol(c, routes[0]), false
}
