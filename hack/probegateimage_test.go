package hack

import (
	"io/fs"
	"os"
	"strings"
	"testing"
)

// shellFunc returns the body of the shell function name in script.
func shellFunc(t *testing.T, script, name string) string {
	t.Helper()
	_, body, ok := strings.Cut(script, "\n"+name+"() {\n")
	if !ok {
		t.Fatalf("no function %s", name)
	}
	body, _, ok = strings.Cut(body, "\n}\n")
	if !ok {
		t.Fatalf("function %s does not end", name)
	}
	return body
}

// TestProbegateImageRecipe holds the probegate image's build to what the container needs: a static
// probegate (CGO_ENABLED=0, checked after the build), the kind CLI beside it, and host-prep.sh's
// container mode switched on; and keeps the script out of the recipe a binary carries (it builds
// cmd/probegate, which only a checkout has).
func TestProbegateImageRecipe(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	script, common, dockerfile := read("probegate-image.sh"), read("lib/common.sh"), read("probegate-image/Dockerfile")
	if !strings.Contains(common, "\nexport CGO_ENABLED=0\n") {
		t.Error("lib/common.sh no longer exports CGO_ENABLED=0: the images' Go binaries would link libc")
	}
	build := shellFunc(t, script, "build_probegate")
	for _, want := range []string{
		`go build -trimpath -ldflags "-s -w" -o "$ctx/probegate" ./cmd/probegate`,
		`go version -m "$ctx/probegate" | grep -q '^[[:space:]]*build[[:space:]]*CGO_ENABLED=0$'`,
		`cp "$kind" "$HACK_DIR/probegate-image/Dockerfile" "$ctx/"`,
		`tag_build probegate "$hash" "$ctx" --build-arg "ROOTFS=$base"`,
		`"$HACK_DIR/build-rootfs.sh" probegate docker.io`,
	} {
		if !strings.Contains(build, want) {
			t.Errorf("build_probegate lacks %s", want)
		}
	}
	if strings.Contains(script, "CGO_ENABLED=1") {
		t.Error("probegate-image.sh turns cgo on")
	}
	for _, want := range []string{"COPY probegate kind /usr/local/bin/", "PROBEGATE_IN_CONTAINER=1", `ENTRYPOINT ["/usr/local/bin/probegate"]`} {
		if !strings.Contains(dockerfile, want) {
			t.Errorf("probegate-image/Dockerfile lacks %s", want)
		}
	}
	if _, err := fs.Stat(Files, "probegate-image.sh"); err == nil {
		t.Error("probegate-image.sh is embedded: a binary's recipe has no cmd/probegate to build")
	}
}

// TestDocumentedDockerRunReachesTheHost holds every documented `docker run` of the probegate image
// to what a run needs from the host: the docker socket (kind, docker exec into the node), the host's
// network (the API server and the NodePorts on 127.0.0.1), the cache (kubeconfig, image stamps) and
// an init that passes Ctrl-C on.
func TestDocumentedDockerRunReachesTheHost(t *testing.T) {
	for _, doc := range []string{"../docs/ci.md", "../README.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "docker run ") || !strings.Contains(line, "probegate/probegate:dev run ") {
				continue
			}
			n++
			for _, want := range []string{"--init", "--network host", "-v /var/run/docker.sock:/var/run/docker.sock",
				"-v /var/cache/probegate:/var/cache/probegate", "-w /work"} {
				if !strings.Contains(line, want) {
					t.Errorf("%s: %q lacks %s", doc, line, want)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s shows no docker run of probegate/probegate:dev", doc)
		}
	}
}
