package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/runner"
	"github.com/probegate/probegate/scenarios"
)

func init() { register(newListCmd) }

func newListCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the scenario catalogue",
		Long: `Lists the scenarios probegate run knows (validated against the fault types, verdict rules and target
variants of this build). -o name prints only the names; -o wide adds the expected verdicts and the
description.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "name" && output != "wide" {
				return withCode(ExitError, fmt.Errorf("-o %q: want name or wide", output))
			}
			cat, _, err := scenarios.Load(runner.Vocabulary(runner.DefaultFaults()))
			if err != nil {
				return withCode(ExitError, err)
			}
			w := cmd.OutOrStdout()
			if output == "name" {
				for _, s := range cat.Scenarios {
					fmt.Fprintln(w, s.Name)
				}
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			header := "NAME\tSPAN\tPARALLEL\tFAULTS"
			if output == "wide" {
				header += "\tEXPECT\tDESCRIPTION"
			}
			fmt.Fprintln(tw, header)
			for _, s := range cat.Scenarios {
				faults := make([]string, 0, len(s.Faults))
				for _, f := range s.Faults {
					faults = append(faults, fmt.Sprintf("%s@%s", f.Type, f.At))
				}
				row := fmt.Sprintf("%s\t%s\t%v\t%s", s.Name, s.Span(), s.Parallel, orNone(strings.Join(faults, ",")))
				if output == "wide" {
					row += fmt.Sprintf("\t%s\t%s", strings.Join(s.Rules(), ","), firstSentence(s.Description))
				}
				fmt.Fprintln(tw, row)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name or wide")
	return cmd
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
