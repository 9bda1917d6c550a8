package cluster

import (
	"context"
	"encoding/json"
	"strings"
)

// heldOnNodes reports which of images (Docker's reference → Docker's image ID) every node of the
// cluster already holds with that ID, so that loading them again would change nothing. kind load
// makes the same check with crictl, which the offline node image lacks: without this every run
// re-imported every image (9 s for the database's, on a quiet host). The check reads containerd's
// own record on each node: the image the reference names, and the config digest of its manifest,
// which is Docker's image ID. Anything it cannot read (no node known, an index, an error) counts
// as not held.
func (c *Cluster) heldOnNodes(ctx context.Context, images map[string]string) map[string]bool {
	refs := map[string]string{} // the images still held on every node read so far → containerd's reference
	for img, id := range images {
		if full, ok := containerdRef(img); ok && id != "" && len(c.Nodes) > 0 {
			refs[img] = full
		}
	}
	for _, node := range c.Nodes {
		list, err := c.NodeExecOn(ctx, node, "ctr", "-n", "k8s.io", "images", "ls")
		if err != nil {
			return nil
		}
		for img, full := range refs {
			if !c.holds(ctx, node, listedDigest(string(list), full), images[img]) {
				delete(refs, img)
			}
		}
	}
	held := map[string]bool{}
	for img := range refs {
		held[img] = true
	}
	return held
}

// holds reports whether the manifest with digest on node names the image config id.
func (c *Cluster) holds(ctx context.Context, node, digest, id string) bool {
	if digest == "" {
		return false
	}
	manifest, err := c.NodeExecOn(ctx, node, "ctr", "-n", "k8s.io", "content", "get", digest)
	if err != nil {
		return false
	}
	var m struct {
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
	}
	return json.Unmarshal(manifest, &m) == nil && m.Config.Digest == id
}

// listedDigest is the digest column of ref's row in `ctr images ls` output, "" when it is not listed.
func listedDigest(out, ref string) string {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == ref && strings.HasPrefix(f[2], "sha256:") {
			return f[2]
		}
	}
	return ""
}

// containerdRef is Docker's short image reference as containerd records it: the default registry
// and library path and the latest tag filled in. A reference by digest is not handled (false).
func containerdRef(ref string) (string, bool) {
	if ref == "" || strings.Contains(ref, "@") {
		return "", false
	}
	name := ref
	if i := strings.IndexByte(ref, '/'); i < 0 {
		name = "docker.io/library/" + ref
	} else if first := ref[:i]; !strings.ContainsAny(first, ".:") && first != "localhost" {
		name = "docker.io/" + ref
	}
	if last := name[strings.LastIndexByte(name, '/')+1:]; !strings.Contains(last, ":") {
		name += ":latest"
	}
	return name, true
}
