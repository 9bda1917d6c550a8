// Package cli builds probegate's cobra command tree. Each subcommand lives in its own file, parses
// flags into a small options struct and calls a library package; no harness logic lives here.
package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/interrupt"
)

// Exit codes shared by every subcommand. A command stopped by SIGINT or SIGTERM exits with
// 128+signal: 130 or 143 (see internal/interrupt).
const (
	ExitOK           = 0 // everything passed
	ExitFail         = 1 // a verdict (or a lint finding at or above --fail-on) failed
	ExitError        = 2 // bad input, harness or setup error
	ExitInconclusive = 3 // nothing failed, but some verdict could not be shown
	ExitRegression   = 4 // compare: a verdict newly failed or a measure drifted toward its bound
)

// ExitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err so Main exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// failed is returned by a command whose work ran but whose result is a failure (exit 1) or
// inconclusive (exit 3). The command has already printed why.
var errFailed = errors.New("failed")

// Main runs probegate with args and returns the process exit code. SIGINT and SIGTERM cancel the
// command's context (a second one makes teardown skip its waits); a command they stopped exits
// with 128+signal whatever it returned, never 0.
func Main(args []string) int {
	ctx, stop := interrupt.Notify(context.Background(), os.Stderr)
	defer stop()

	root := newRoot()
	root.SetArgs(args)
	code := exitCode(root.ExecuteContext(ctx))
	if sig := interrupt.From(ctx); sig != nil {
		return sig.ExitCode()
	}
	return code
}

// exitCode prints err's one line (unless the command already said why) and returns its code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !errors.Is(ee.err, errFailed) {
			fmt.Fprintf(os.Stderr, "probegate: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(os.Stderr, "probegate: %v\n", err)
	return ExitError
}

func newRoot() *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:   "probegate",
		Short: "Prove that Kubernetes health probes do what their authors think under failure",
		Long: `probegate deploys a target onto a kind cluster, drives constant HTTP load, injects faults
(database slowness, event-loop stalls, cold starts, pod deletions, rolling updates) and records every
EndpointSlice transition, container restart and request on one timeline. It then judges that timeline
against each scenario's expected verdicts and a timing oracle computed from the pod's probe settings.

Exit codes: 0 every verdict passed, 1 a verdict failed, 2 bad input or a harness/setup error,
3 nothing failed but some verdict was INCONCLUSIVE (or no scenario applied), 4 (compare) a verdict
newly failed or a measure drifted toward its bound, 130 (SIGINT, Ctrl-C) or 143 (SIGTERM) interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			level := slog.LevelInfo
			if verbose {
				level = slog.LevelDebug
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
		},
	}
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log debug detail to stderr")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withCode(ExitError, err) })
	for _, add := range subcommands {
		root.AddCommand(add())
	}
	return root
}

// subcommands holds the constructors registered by each command file's init.
var subcommands []func() *cobra.Command

func register(newCmd func() *cobra.Command) { subcommands = append(subcommands, newCmd) }
