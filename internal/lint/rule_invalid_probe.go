package lint

import (
	"fmt"
	"strings"
)

func init() {
	register(&Rule{
		ID:       "PG016",
		Name:     "invalid-pod-spec",
		Severity: Error,
		Summary:  "a probe without exactly one handler, a negative probe timing, or a pod without containers",
		Explanation: "The API server rejects a probe that names no handler (httpGet, tcpSocket, grpc or exec) " +
			"or more than one, negative initialDelaySeconds, periodSeconds, timeoutSeconds or thresholds, and a " +
			"pod template without containers. The object is never admitted, so the rollout that carries it " +
			"fails before any pod runs; the other rules cannot judge such a probe either.",
		Fix:         "Give every probe exactly one handler and non-negative timings; give the pod template at least one container.",
		ConfirmNote: "kubectl apply --dry-run=server -f <manifest> (the API server rejects the object; no scenario can run it)",
		Restates:    []string{"PG001", "PG002", "PG003", "PG004", "PG005", "PG006", "PG007", "PG011", "PG012"},
		Check:       checkInvalidPodSpec,
	})
}

func checkInvalidPodSpec(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG016")
	if len(w.Pod.Containers) == 0 {
		f := r.finding(ctx, w, w.At("containers"), "", "%s has no containers: the API server rejects the pod template", w.Ref())
		f.Fix = "add the container the workload runs under spec.template.spec.containers"
		return []Finding{f}
	}
	var out []Finding
	for _, c := range w.Containers() {
		for _, kind := range []ProbeKind{Liveness, Readiness, Startup} {
			p := probeOf(c, kind)
			if p == nil {
				continue
			}
			pos := w.AtContainer(c, kind.field())
			if n := handlerCount(p); n != 1 {
				msg := "names no handler"
				if n > 1 {
					msg = fmt.Sprintf("names %d handlers", n)
				}
				f := r.finding(ctx, w, pos, c.Name, "container %q: %s probe %s (want exactly one of httpGet, tcpSocket, grpc, exec): the API server rejects it", c.Name, kind, msg)
				f.Probe = string(kind)
				f.Fix = fmt.Sprintf("give the %s exactly one handler, e.g. httpGet: {path: /healthz, port: <port>}", kind.field())
				out = append(out, f)
			}
			var neg []string
			for _, v := range []struct {
				name string
				n    int32
			}{{"initialDelaySeconds", p.InitialDelaySeconds}, {"periodSeconds", p.PeriodSeconds}, {"timeoutSeconds", p.TimeoutSeconds},
				{"failureThreshold", p.FailureThreshold}, {"successThreshold", p.SuccessThreshold}} {
				if v.n < 0 {
					neg = append(neg, fmt.Sprintf("%s %d", v.name, v.n))
				}
			}
			if len(neg) > 0 {
				f := r.finding(ctx, w, pos, c.Name, "container %q: %s probe has negative %s: the API server rejects it", c.Name, kind, strings.Join(neg, ", "))
				f.Probe = string(kind)
				f.Fix = fmt.Sprintf("remove the negative fields from the %s (unset fields take the defaults: period 10s, timeout 1s, failureThreshold 3)", kind.field())
				out = append(out, f)
			}
		}
	}
	return out
}
