package lint

import (
	"net/url"
	"path"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// dbClients are command-line clients of databases and brokers, by binary name.
var dbClients = map[string]string{
	"psql": "PostgreSQL", "pg_isready": "PostgreSQL", "mysql": "MySQL", "mysqladmin": "MySQL",
	"mariadb": "MariaDB", "mariadb-admin": "MariaDB", "mongo": "MongoDB", "mongosh": "MongoDB",
	"redis-cli": "Redis", "valkey-cli": "Valkey", "cqlsh": "Cassandra", "nodetool": "Cassandra",
	"rabbitmq-diagnostics": "RabbitMQ", "rabbitmqctl": "RabbitMQ", "etcdctl": "etcd", "clickhouse-client": "ClickHouse",
}

// httpClients fetch a URL.
var httpClients = map[string]bool{"curl": true, "wget": true}

// localHost matches hosts that are the container itself.
var localHost = regexp.MustCompile(`^(localhost|127\.[0-9.]+|::1|\[::1\]|0\.0\.0\.0|\$\(?hostname.*|\$\{?(HOSTNAME|POD_IP|MY_POD_IP)\}?|)$`)

// execCheck is what an exec probe's command talks to.
type execCheck struct {
	client string // "PostgreSQL", "HTTP", …
	binary string
	host   string // "" when it talks to the container itself
	db     bool
	// script names the ConfigMap file the client runs in ("" when the probe's command runs it):
	// "ping.sh of ConfigMap redis-health".
	script string
}

var shellSplit = regexp.MustCompile(`[\s;&|()'"]+`)

// execDependency reads an exec probe's command for a database client or an HTTP fetch, and the host
// it talks to. ok is false when the command runs neither.
func execDependency(p *corev1.Probe) (execCheck, bool) {
	if p == nil || p.Exec == nil || len(p.Exec.Command) == 0 {
		return execCheck{}, false
	}
	words := p.Exec.Command
	if execShell(words) != "" {
		words = shellSplit.Split(strings.Join(words[1:], " "), -1)
	}
	return dependencyInWords(words)
}

// dependencyInWords finds the first database client or HTTP fetch among the words of a command or
// script, and the host it talks to.
func dependencyInWords(words []string) (execCheck, bool) {
	for i, w := range words {
		bin := path.Base(w)
		name, db := dbClients[bin]
		if !db && !httpClients[bin] {
			continue
		}
		c := execCheck{client: name, binary: bin, db: db}
		if !db {
			c.client = "HTTP"
		}
		c.host = hostArg(words[i+1:], db)
		if localHost.MatchString(c.host) {
			c.host = ""
		}
		return c, true
	}
	return execCheck{}, false
}

// hostArg finds the host a client's arguments name: -h HOST, --host HOST, --host=HOST, -hHOST,
// host=HOST (libpq), or the host of a URL.
func hostArg(args []string, db bool) string {
	for i, a := range args {
		switch {
		case (a == "-h" || a == "--host" || a == "-host") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--host="):
			return strings.TrimPrefix(a, "--host=")
		case strings.HasPrefix(a, "host="):
			return strings.TrimPrefix(a, "host=")
		case db && strings.HasPrefix(a, "-h") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			return a[2:]
		case strings.Contains(a, "://"):
			if u, err := url.Parse(a); err == nil {
				return u.Hostname()
			}
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
	}
	return ""
}

// describe names the check for messages: "a PostgreSQL client (psql) against primary".
func (c execCheck) describe() string {
	s := "a " + c.client + " client (" + c.binary + ")"
	if c.host != "" {
		s += " against " + c.host
	}
	if c.script != "" {
		s += " in " + c.script
	}
	return s
}
