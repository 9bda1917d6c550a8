package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSpecPaths(t *testing.T) {
	cases := []struct {
		args            []string
		bundle, process string
	}{
		{[]string{"--root", "/r", "--log", "/l", "create", "--bundle", "/b", "--pid-file", "/p", "id"}, "/b", ""},
		{[]string{"create", "-b", "/b2", "id"}, "/b2", ""},
		{[]string{"run", "--bundle=/b3", "id"}, "/b3", ""},
		{[]string{"--root", "/r", "exec", "--process", "/tmp/p.json", "--detach", "id"}, "", "/tmp/p.json"},
		{[]string{"exec", "-p", "/tmp/q.json", "id"}, "", "/tmp/q.json"},
		{[]string{"delete", "--force", "id"}, "", ""},
	}
	for _, c := range cases {
		b, p := specPaths(c.args)
		if b != c.bundle || p != c.process {
			t.Errorf("specPaths(%v) = %q, %q; want %q, %q", c.args, b, p, c.bundle, c.process)
		}
	}
}

func TestDropCapRemovesSysResourceEverywhere(t *testing.T) {
	all := []string{"CAP_CHOWN", "CAP_SYS_RESOURCE", "CAP_NET_ADMIN"}
	caps := map[string]any{"bounding": all, "effective": all, "permitted": all, "inheritable": all}
	for _, tc := range []struct {
		name string
		key  string
		doc  map[string]any
	}{
		{"bundle config", "process", map[string]any{"ociVersion": "1.0.2", "process": map[string]any{"capabilities": caps, "args": []string{"/sbin/init"}}}},
		{"exec process", "", map[string]any{"args": []string{"sh"}, "capabilities": caps}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spec.json")
			raw, _ := json.Marshal(tc.doc)
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := dropCap(path, tc.key); err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			raw, _ = os.ReadFile(path)
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			proc := got
			if tc.key != "" {
				proc = got[tc.key].(map[string]any)
			}
			for set, v := range proc["capabilities"].(map[string]any) {
				var list []string
				for _, c := range v.([]any) {
					list = append(list, c.(string))
				}
				if slices.Contains(list, dropped) {
					t.Errorf("%s still holds %s: %v", set, dropped, list)
				}
				if !slices.Contains(list, "CAP_NET_ADMIN") || len(list) != 2 {
					t.Errorf("%s lost other capabilities: %v", set, list)
				}
			}
		})
	}
}
