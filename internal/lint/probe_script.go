package lint

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// probeScriptText is what the explanations of the rules that read an exec probe's command say about
// scripts kept in ConfigMaps.
const probeScriptText = " When the command runs a file of a ConfigMap the container mounts (directly, by subPath or " +
	"through a projected volume) and that ConfigMap is linted alongside, the file's text is read as part of the " +
	"command, and so are the files of the same ConfigMap it calls; a ConfigMap kept elsewhere leaves the script unread."

// probeScript is a file of a ConfigMap in view that an exec probe runs.
type probeScript struct {
	configMap *ConfigMap
	key       string
}

func (s probeScript) String() string { return s.key + " of ConfigMap " + s.configMap.Name }

// words splits the script's text into shell words, leaving out comment lines.
func (s probeScript) words() []string {
	var out []string
	for _, line := range strings.Split(s.configMap.Data[s.key], "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		out = append(out, shellSplit.Split(line, -1)...)
	}
	return out
}

// configMapMount is a ConfigMap, in view, that a container mounts: at mountPath, or as the one file
// subPath names there. items, when set, map the ConfigMap's keys to file paths.
type configMapMount struct {
	mountPath, subPath string
	configMap          *ConfigMap
	items              []corev1.KeyToPath
}

// configMapMounts lists the ConfigMaps in view that container c of w mounts, directly or through a
// projected volume.
func configMapMounts(ctx *Context, w *Workload, c ContainerRef) []configMapMount {
	var out []configMapMount
	for _, vm := range c.VolumeMounts {
		for _, v := range w.Pod.Volumes {
			if v.Name != vm.Name {
				continue
			}
			var sources []*corev1.ConfigMapProjection
			switch {
			case v.ConfigMap != nil:
				sources = append(sources, &corev1.ConfigMapProjection{LocalObjectReference: v.ConfigMap.LocalObjectReference, Items: v.ConfigMap.Items})
			case v.Projected != nil:
				for _, src := range v.Projected.Sources {
					if src.ConfigMap != nil {
						sources = append(sources, src.ConfigMap)
					}
				}
			}
			for _, src := range sources {
				if cm := ctx.configMap(w.Namespace, src.Name); cm != nil {
					out = append(out, configMapMount{mountPath: path.Clean(vm.MountPath), subPath: vm.SubPath, configMap: cm, items: src.Items})
				}
			}
		}
	}
	return out
}

// file returns the key of the ConfigMap file that absolute path p names under mount m.
func (m configMapMount) file(p string) (string, bool) {
	p = path.Clean(p)
	var rel string
	switch {
	case m.subPath != "":
		if p != m.mountPath {
			return "", false
		}
		rel = m.subPath
	case strings.HasPrefix(p, m.mountPath+"/"):
		rel = strings.TrimPrefix(p, m.mountPath+"/")
	default:
		return "", false
	}
	key := rel
	if len(m.items) > 0 {
		key = ""
		for _, it := range m.items {
			if path.Clean(it.Path) == rel {
				key = it.Key
			}
		}
	}
	_, ok := m.configMap.Data[key]
	return key, ok && key != ""
}

// probeScripts returns the ConfigMap files in view that exec probe p of container c runs: each word
// of its command that is a path under a ConfigMap volume c mounts, and, within those files, each
// word that names another such path or, by its base name, another file of the same ConfigMap (a
// script that calls its sibling through "$(dirname "$0")/other.sh"). Each file is listed once.
func probeScripts(ctx *Context, w *Workload, c ContainerRef, p *corev1.Probe) []probeScript {
	if p == nil || p.Exec == nil || len(ctx.Inventory.ConfigMaps) == 0 {
		return nil
	}
	mounts := configMapMounts(ctx, w, c)
	if len(mounts) == 0 {
		return nil
	}
	var out []probeScript
	seen := map[*ConfigMap]map[string]bool{}
	add := func(s probeScript) bool {
		if seen[s.configMap] == nil {
			seen[s.configMap] = map[string]bool{}
		}
		if seen[s.configMap][s.key] {
			return false
		}
		seen[s.configMap][s.key] = true
		out = append(out, s)
		return true
	}
	var visit func(words []string, from *ConfigMap)
	visit = func(words []string, from *ConfigMap) {
		for _, word := range words {
			var found []probeScript
			if strings.HasPrefix(word, "/") {
				for _, m := range mounts {
					if key, ok := m.file(word); ok {
						found = append(found, probeScript{configMap: m.configMap, key: key})
					}
				}
			}
			if base := path.Base(word); len(found) == 0 && from != nil && base != word {
				if _, ok := from.Data[base]; ok {
					found = append(found, probeScript{configMap: from, key: base})
				}
			}
			for _, s := range found {
				if add(s) {
					visit(s.words(), s.configMap)
				}
			}
		}
	}
	visit(shellSplit.Split(strings.Join(p.Exec.Command, " "), -1), nil)
	return out
}

// probeExecDependency is execDependency for probe p of container c, reading also the ConfigMap
// scripts the probe runs (probeScripts). A client that talks to another host wins over one that
// talks to the container itself, wherever each is.
func probeExecDependency(ctx *Context, w *Workload, c ContainerRef, p *corev1.Probe) (execCheck, bool) {
	best, found := execDependency(p)
	if found && best.host != "" {
		return best, true
	}
	for _, s := range probeScripts(ctx, w, c, p) {
		ec, ok := dependencyInWords(s.words())
		if !ok {
			continue
		}
		ec.script = s.String()
		if ec.host != "" {
			return ec, true
		}
		if !found {
			best, found = ec, true
		}
	}
	return best, found
}
