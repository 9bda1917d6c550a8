package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/scenarios"
)

func init() { register(newListCmd) }

func newListCmd() *cobra.Command {
	var (
		output     string
		faultTypes bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the scenario catalogue",
		Long: `Lists the scenarios probegate run knows (validated against the fault types, verdict rules and target
variants of this build). -o name prints only the names; -o wide adds the expected verdicts and the
description. --faults lists the fault types instead, from the fault registry (see docs/faults.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "name" && output != "wide" {
				return withCode(ExitError, fmt.Errorf("-o %q: want name or wide", output))
			}
			if faultTypes {
				return listFaults(cmd.OutOrStdout(), output)
			}
			cat, _, err := scenarios.Load(scenarios.Vocabulary())
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
					desc := fmt.Sprintf("%s@%s", f.Type, f.At)
					if f.Until != "" {
						desc += " until " + f.Until // the hold depends on the target's probes
					}
					if f.AtLeast != "" {
						desc += " (at least until " + f.AtLeast + ")"
					}
					faults = append(faults, desc)
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
	cmd.Flags().BoolVar(&faultTypes, "faults", false, "list the fault types instead of the scenarios")
	return cmd
}

// listFaults prints the registered fault types: names only, a table of their parameters and needs,
// or (wide) with what each does.
func listFaults(w io.Writer, output string) error {
	defs := faults.Definitions()
	if output == "name" {
		for _, d := range defs {
			fmt.Fprintln(w, d.Type)
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "TYPE\tPARAMS\tNEEDS"
	if output == "wide" {
		header += "\tDESCRIPTION"
	}
	fmt.Fprintln(tw, header)
	for _, d := range defs {
		params := make([]string, len(d.Params))
		for i, p := range d.Params {
			params[i] = p.Name
			if p.Required {
				params[i] += "*"
			}
		}
		needs := make([]string, len(d.Needs))
		for i, c := range d.Needs {
			needs[i] = c.Name
		}
		row := fmt.Sprintf("%s\t%s\t%s", d.Type, orNone(strings.Join(params, ",")), orNone(strings.Join(needs, ",")))
		if output == "wide" {
			row += "\t" + d.Doc
		}
		fmt.Fprintln(tw, row)
	}
	return tw.Flush()
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
