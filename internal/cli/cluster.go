package cli

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/cluster"
)

func init() { register(newClusterCmd) }

func newClusterCmd() *cobra.Command {
	var opts cluster.Options
	var fix bool
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Create, inspect or delete the local offline kind cluster",
		Long: `The local kind cluster is built with no registry: the node image and every image it runs are
built from Debian packages and Go modules (hack/node-image.sh, cached by content). Egress from the
node and from every docker container is fenced: nothing the cluster does leaves the machine.`,
	}
	cmd.PersistentFlags().StringVar(&opts.Name, "name", cluster.DefaultName, "kind cluster name")

	create := &cobra.Command{
		Use:   "create",
		Short: "Create the cluster (or reuse a running one with as many nodes) and wait until its nodes and CoreDNS are ready",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Log = slog.Default()
			c, err := cluster.Create(cmd.Context(), opts)
			if err != nil {
				return withCode(ExitError, err)
			}
			fmt.Fprintf(os.Stdout, "cluster %q ready; kubeconfig: %s\n  export KUBECONFIG=%s\n", c.Name, c.Kubeconfig, c.Kubeconfig)
			return nil
		},
	}
	create.Flags().StringVar(&opts.Config, "config", "", "kind config file (default: the embedded kind-config.yaml, or $PROBEGATE_ROOT/kind-config.yaml)")
	create.Flags().StringVar(&opts.NodeImage, "image", "", "node image (default $KIND_NODE_IMAGE, else build the offline image)")
	create.Flags().DurationVar(&opts.WaitTimeout, "wait", 0, "how long to wait for the nodes and CoreDNS (default 3m)")
	create.Flags().IntVar(&opts.Workers, "workers", 0, fmt.Sprintf("worker nodes beside the control plane, 0 to %d (default $PROBEGATE_WORKERS, else 0); host ports stay on the control plane", cluster.MaxWorkers))

	del := &cobra.Command{
		Use:   "delete",
		Short: "Delete the cluster and restore the host sysctls kubelet changed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Log = slog.Default()
			return withCode(ExitError, cluster.Delete(cmd.Context(), opts))
		},
	}

	fence := &cobra.Command{
		Use:   "fence",
		Short: "Show each node's egress fence (its rule number in OUTPUT and FORWARD) and how many packets it has rejected",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cluster.Get(cmd.Context(), opts.Name)
			if err != nil {
				return withCode(ExitError, err)
			}
			if fix {
				if err := c.PutFencesFirst(cmd.Context()); err != nil {
					return withCode(ExitError, err)
				}
			}
			sts, err := c.Fences(cmd.Context())
			for _, st := range sts {
				fmt.Println(st)
			}
			return withCode(ExitError, err)
		},
	}
	fence.Flags().BoolVar(&fix, "fix", false, "first put every node's fence back as rule #1 of OUTPUT and FORWARD (IPv4 and IPv6)")
	cmd.AddCommand(create, del, fence)
	return cmd
}
