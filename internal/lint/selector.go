package lint

// servicesSelecting returns the Services in the inventory whose selector matches w's pods. A
// namespace left empty in a manifest matches any (the manifest is applied into one namespace).
func servicesSelecting(inv *Inventory, w *Workload) []*Service {
	var out []*Service
	for _, s := range inv.Services {
		if s.Namespace != "" && w.Namespace != "" && s.Namespace != w.Namespace {
			continue
		}
		if len(s.Spec.Selector) == 0 {
			continue // no selector: endpoints are managed by hand
		}
		match := true
		for k, v := range s.Spec.Selector {
			if w.PodLabels[k] != v {
				match = false
				break
			}
		}
		if match {
			out = append(out, s)
		}
	}
	return out
}

// serves reports whether w looks like it takes traffic: a Service selects it or a container has a
// readiness probe. Jobs and CronJobs never count.
func serves(ctx *Context, w *Workload) bool {
	if w.Kind == "Job" || w.Kind == "CronJob" {
		return false
	}
	if len(servicesSelecting(ctx.Inventory, w)) > 0 {
		return true
	}
	for _, c := range w.Containers() {
		if c.ReadinessProbe != nil {
			return true
		}
	}
	return false
}
