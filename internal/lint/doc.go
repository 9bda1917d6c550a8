// Package lint is probegate's static probe analysis. It reads workloads (Deployments, StatefulSets,
// DaemonSets, Pods) and Services from YAML files or a live namespace and checks their probes and
// shutdown settings against the probe contract: liveness answers "would a restart help?",
// readiness "should this instance get new traffic?", startup is a bootstrap budget, and shutdown
// withdraws, drains and exits inside the grace period.
//
// The rules are about timing and dependencies (detection windows, startup budgets, grace periods,
// dependency checks behind short timeouts), not only about whether probes exist. Every rule lives
// in its own file, registers itself, and names the probegate scenario that confirms its finding on a
// real cluster.
package lint
