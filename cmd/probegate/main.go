// Command probegate proves that a service's Kubernetes health probes do what their authors think
// under failure. It is a thin shell over the libraries under internal/; see internal/cli.
package main

import (
	"os"

	"github.com/probegate/probegate/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
