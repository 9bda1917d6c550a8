package observers

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/probegate/probegate/internal/timeline"
)

// rolloutHandler writes a RolloutProgress whenever a Deployment's generation or replica counts
// change (and once for each Deployment present when the observer starts).
func rolloutHandler(o *Observer) cache.ResourceEventHandler {
	emit := func(obj any, d *appsv1.Deployment) {
		if o.opts.Deployment != "" && d.Name != o.opts.Deployment {
			return
		}
		p := progressOf(d)
		o.append(o.stampOf(obj), timeline.Entry{Kind: timeline.KindRollout, Rollout: &p})
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, _ bool) {
			if d, ok := obj.(*appsv1.Deployment); ok {
				emit(obj, d)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*appsv1.Deployment)
			d, ok2 := newObj.(*appsv1.Deployment)
			if ok1 && ok2 && progressOf(old) != progressOf(d) {
				emit(newObj, d)
			}
		},
	}
}

// progressOf reads a Deployment's rollout counts; Replicas is the desired count.
func progressOf(d *appsv1.Deployment) timeline.RolloutProgress {
	p := timeline.RolloutProgress{
		Deployment:  d.Name,
		Generation:  d.Generation,
		Replicas:    d.Status.Replicas,
		Updated:     d.Status.UpdatedReplicas,
		Ready:       d.Status.ReadyReplicas,
		Available:   d.Status.AvailableReplicas,
		Unavailable: d.Status.UnavailableReplicas,
	}
	if d.Spec.Replicas != nil {
		p.Replicas = *d.Spec.Replicas
	}
	return p
}
