package lint

import (
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// longLivedProtocols are application protocols whose clients hold a connection open for many
// requests, or for a stream, and re-establish it when it drops: data stores, brokers and
// websockets, and xDS control planes. Names as they appear in a Service port's appProtocol (IANA service names,
// kubernetes.io/ws and kubernetes.io/wss) or in port names (the mesh convention
// `<protocol>[-<suffix>]`, or the protocol alone).
var longLivedProtocols = map[string]bool{
	"redis": true, "memcache": true, "memcached": true,
	"mongo": true, "mongodb": true, "mysql": true, "mariadb": true, "postgres": true, "postgresql": true,
	"cql": true, "cassandra": true, "zookeeper": true,
	"amqp": true, "amqps": true, "mqtt": true, "mqtts": true, "kafka": true, "nats": true,
	"ws": true, "wss": true, "websocket": true, "websockets": true,
	"ldap": true, "ldaps": true,
	// Envoy's discovery protocol: each proxy holds one gRPC stream (ADS) to its control plane.
	"xds": true, "ads": true,
}

// requestProtocols are the request/response protocols an appProtocol may name: each request
// that lands on a refused connection fails.
var requestProtocols = map[string]bool{
	"http": true, "https": true, "http2": true, "h2c": true, "grpc": true,
}

// longLivedProtocol returns the protocol of long-lived connections that route r carries to
// container c, or "" when the manifest says it carries a request protocol or does not say. The
// Service port's appProtocol decides when it names a protocol of either kind; otherwise a
// long-lived protocol named by the Service port, its target port name or the container port it
// reaches (a websocket port behind a Service port named http) marks the route.
func longLivedProtocol(c ContainerRef, r route) string {
	if r.port.AppProtocol != nil {
		for _, tok := range nameTokens(*r.port.AppProtocol) {
			if longLivedProtocols[tok] {
				return tok
			}
			if requestProtocols[tok] {
				return ""
			}
		}
	}
	names := []string{r.port.Name}
	if r.port.TargetPort.Type == intstr.String {
		names = append(names, r.port.TargetPort.StrVal)
	}
	if cp, ok := targetContainerPort(c, r.port); ok {
		names = append(names, cp.Name)
	}
	for _, n := range names {
		for _, tok := range nameTokens(n) {
			if longLivedProtocols[tok] {
				return tok
			}
		}
	}
	if r.assumed && r.port.Name == "" {
		return longLivedPortNumbers[r.port.Port]
	}
	return ""
}

// longLivedPortNumbers are the registered ports of long-lived protocols. They name the protocol of an
// unnamed container port only when no Service is in view (an assumed route): a Service in view
// names its ports, and lint reads those names.
var longLivedPortNumbers = map[int32]string{
	6379: "redis", 26379: "redis", 11211: "memcached", 5432: "postgres", 3306: "mysql", 27017: "mongodb",
	9042: "cql", 2181: "zookeeper", 5672: "amqp", 1883: "mqtt", 9092: "kafka", 4222: "nats", 389: "ldap", 636: "ldaps",
}

// targetContainerPort is the port of container c that Service port p delivers to, if c declares it.
func targetContainerPort(c ContainerRef, p corev1.ServicePort) (corev1.ContainerPort, bool) {
	target := p.TargetPort
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(p.Port)
	}
	for _, cp := range c.Ports {
		if target.Type == intstr.String && cp.Name == target.StrVal ||
			target.Type == intstr.Int && cp.ContainerPort == target.IntVal {
			return cp, true
		}
	}
	return corev1.ContainerPort{}, false
}

// nameTokens splits a port name or appProtocol into lower-case words: "tcp-redis" is tcp and redis,
// "kubernetes.io/ws" is kubernetes, io and ws.
func nameTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
