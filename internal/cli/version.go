package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/version"
)

func init() { register(newVersionCmd) }

// newVersionCmd prints the build's version, the one reports carry, with its Go toolchain and
// platform: a quick check that a binary or the container image runs at all.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print probegate's version (the one reports carry), Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "probegate %s (%s, %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
