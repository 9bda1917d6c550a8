// Package hack embeds the host scripts and the node image recipe that `probegate cluster create`
// runs, so the binary needs no source tree: internal/cluster writes them to a content-addressed
// directory and runs them from there. The scripts stay runnable in place from a checkout (make).
package hack

import "embed"

// Files holds host-prep.sh, node-image.sh, images.sh and everything they source, run, build or
// copy into the node image, with paths relative to hack/. Scripts only make and CI run (test.sh,
// bench.sh, examples.sh) are not embedded.
//
//go:embed host-prep.sh node-image.sh images.sh build-kube.sh build-addons.sh build-rootfs.sh lib node pause runc-shim
var Files embed.FS

// Executable names the files in Files that are executable in the repository; embed keeps no file
// modes, and the scripts run each other directly and copy node/files into the image as they are.
var Executable = map[string]bool{
	"host-prep.sh":                        true,
	"node-image.sh":                       true,
	"images.sh":                           true,
	"build-kube.sh":                       true,
	"build-addons.sh":                     true,
	"build-rootfs.sh":                     true,
	"node/prepare.sh":                     true,
	"node/files/usr/local/bin/entrypoint": true,
}
