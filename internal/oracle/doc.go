// Package oracle computes, from a pod's own probe settings, the time windows within which
// Kubernetes can act on a fault: when a probe can first declare it (the detection window
// [(F−1)·P, F·P + timeout]), when the EndpointSlice shows it (plus a propagation allowance for
// kubelet → API → EndpointSlice → kube-proxy), when a liveness kill shows as a restart, how long
// bootstrap may take before a startup kill, when readiness recovers, and whether the termination
// budget (withdrawal + admitted work + cleanup + margin) fits terminationGracePeriodSeconds.
//
// Verdicts compare observed times with these windows instead of hand-set constants. Everything is
// JSON-serialisable and each window carries a one-line explanation for reports.
package oracle
