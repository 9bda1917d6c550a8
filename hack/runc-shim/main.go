// Command runc-shim is registered as Docker's default runtime on hosts whose capability bounding
// set lacks CAP_SYS_RESOURCE. Docker asks runc for every capability under --privileged (which kind
// needs), and runc then fails with "unable to apply caps: operation not permitted". The shim removes
// CAP_SYS_RESOURCE from the OCI spec it is handed — the bundle's config.json for create/run, the
// --process file for exec — and execs the real runc with the same arguments.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const dropped = "CAP_SYS_RESOURCE"

func main() {
	if err := run(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "runc-shim: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	real := os.Getenv("PROBEGATE_REAL_RUNC")
	if real == "" {
		real = "/usr/sbin/runc"
	}
	bundle, process := specPaths(args[1:])
	if bundle != "" {
		if err := dropCap(filepath.Join(bundle, "config.json"), "process"); err != nil {
			return err
		}
	}
	if process != "" {
		if err := dropCap(process, ""); err != nil {
			return err
		}
	}
	return syscall.Exec(real, append([]string{real}, args[1:]...), os.Environ())
}

// specPaths finds the --bundle/-b and --process/-p values in runc's arguments.
func specPaths(args []string) (bundle, process string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--bundle" || a == "-b":
			bundle = next()
		case strings.HasPrefix(a, "--bundle="):
			bundle = strings.TrimPrefix(a, "--bundle=")
		case a == "--process" || a == "-p":
			process = next()
		case strings.HasPrefix(a, "--process="):
			process = strings.TrimPrefix(a, "--process=")
		}
	}
	return bundle, process
}

// dropCap rewrites the JSON file at path without CAP_SYS_RESOURCE in any capability list. key names
// the object holding "capabilities" ("process" in a bundle config, "" for an exec process file).
func dropCap(path, key string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read OCI spec: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("parse OCI spec %s: %w", path, err)
	}
	proc := doc
	if key != "" {
		p, ok := doc[key].(map[string]any)
		if !ok {
			return nil
		}
		proc = p
	}
	caps, ok := proc["capabilities"].(map[string]any)
	if !ok {
		return nil
	}
	changed := false
	for set, v := range caps {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		kept := list[:0:0]
		for _, c := range list {
			if c == dropped {
				changed = true
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode OCI spec: %w", err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("write OCI spec: %w", err)
	}
	return nil
}
