package lint

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func init() {
	register(&Rule{
		ID:       "PG011",
		Name:     "probe-port-undeclared",
		Severity: Warning,
		Summary:  "a probe targets a port the container does not declare",
		Explanation: "A named probe port that no containerPort carries can never be resolved, so the probe " +
			"fails on every attempt: readiness never passes (the rollout hangs) or liveness restarts the " +
			"container forever. A numeric port that another container of the pod declares means the probe checks " +
			"that container's listener (a sidecar's), so this container's failures go unseen. A numeric port " +
			"nobody declares is not flagged: the kubelet probes the pod IP, and declaring it changes nothing.",
		Fix: "Probe a port listed in the container's ports, by name where possible, so the probe and the " +
			"listener change together.",
		Scenario: "cold-start",
		Check:    checkProbePort,
	})
}

func checkProbePort(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG011")
	var out []Finding
	for _, c := range w.Containers() {
		for _, kind := range []ProbeKind{Liveness, Readiness, Startup} {
			port, ok := probePort(probeOf(c, kind))
			if !ok {
				continue
			}
			pos := w.AtContainer(c, kind.field())
			if port.Type == intstr.String {
				if !hasNamedPort(c, port.StrVal) {
					f := r.finding(ctx, w, pos, c.Name, "container %q: %s probe uses port name %q, which no containerPort declares: the probe can never succeed",
						c.Name, kind, port.StrVal)
					f.Severity = Error
					f.Probe = string(kind)
					f.Fix = fmt.Sprintf("name one of container %q's ports %q (declared: %s), or probe a declared port by name", c.Name, port.StrVal, declaredPorts(c))
					out = append(out, f)
				}
				continue
			}
			// A number the container does not declare is fine (the kubelet probes the pod IP); a number
			// another container of the pod declares is that container's listener.
			if hasPortNumber(c, port.IntVal) {
				continue
			}
			for _, o := range w.Containers() {
				if o.Container == c.Container || !hasPortNumber(o, port.IntVal) {
					continue
				}
				f := r.finding(ctx, w, pos, c.Name, "container %q: %s probe checks port %d, which container %q declares: it probes the other container's listener, not this one",
					c.Name, kind, port.IntVal, o.Name)
				f.Probe = string(kind)
				f.Fix = fmt.Sprintf("probe a port container %q listens on (declared: %s), or move the probe to container %q", c.Name, declaredPorts(c), o.Name)
				out = append(out, f)
				break
			}
		}
	}
	return out
}

func hasNamedPort(c ContainerRef, name string) bool {
	for _, p := range c.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

func hasPortNumber(c ContainerRef, n int32) bool {
	for _, p := range c.Ports {
		if p.ContainerPort == n {
			return true
		}
	}
	return false
}

func declaredPorts(c ContainerRef) string {
	if len(c.Ports) == 0 {
		return "none"
	}
	s := ""
	for i, p := range c.Ports {
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(int(p.ContainerPort))
		if p.Name != "" {
			s += " (" + p.Name + ")"
		}
	}
	return s
}
