package runner

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// namespaceName is "<scenario>-<6 hex digits>", unique per run (from the start time) and short
// enough for a DNS label.
func namespaceName(scenarioName string, seed int64, now time.Time) string {
	return fmt.Sprintf("pg-%s-%06x", scenarioName, (uint64(now.UnixNano())^uint64(seed))&0xffffff)
}

// createNamespace creates ns with the runner's labels and extra.
func (r *Runner) createNamespace(ctx context.Context, ns, scenarioName string, extra map[string]string) error {
	labels := map[string]string{labelManaged: "true", labelScenario: scenarioName}
	maps.Copy(labels, extra)
	_, err := r.Conn.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}

// deleteNamespace deletes ns in the background of the run's end (it does not wait for the
// namespace's finalisation); it works after the run's context was cancelled. Its Services go
// first, one by one: the namespace controller removes them only after its pods, seconds later on a
// busy host, and until then their NodePorts hold the run's port slot.
func (r *Runner) deleteNamespace(ns string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	grace := int64(0)
	svcs, err := r.Conn.Client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		log.Warn("list the namespace's services", "namespace", ns, "err", err)
		svcs = &corev1.ServiceList{}
	}
	for _, svc := range svcs.Items {
		if err := r.Conn.Client.CoreV1().Services(ns).Delete(ctx, svc.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
			log.Warn("delete service", "namespace", ns, "service", svc.Name, "err", err)
		}
	}
	if err := r.Conn.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		log.Warn("delete namespace", "namespace", ns, "err", err)
		return
	}
	log.Debug("namespace deleted", "namespace", ns)
}
