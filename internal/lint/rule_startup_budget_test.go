package lint

import (
	"strings"
	"testing"
)

// TestJVMRecognised: PG004 assumes a JVM's cold start for a container that runs on one, whatever
// its image is called: the image, the command or arguments (java, -jar, -Xmx, -XX:…), or the
// environment (JAVA_OPTS and friends, or JVM flags in another variable) tell.
func TestJVMRecognised(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		says       string // "" when the container is not a JVM: no PG004
	}{
		{"image", "        image: eclipse-temurin:21-jre\n", "image eclipse-temurin:21-jre"},
		{"env JAVA_TOOL_OPTIONS", "        image: registry.example/app:1\n        env: [{name: JAVA_TOOL_OPTIONS, value: -XX:MaxRAMPercentage=75}]\n", "env JAVA_TOOL_OPTIONS"},
		{"command java -jar", "        image: registry.example/app:1\n        command: [/usr/bin/java, -jar, /app/app.jar]\n", "command java"},
		{"a shell that runs java", "        image: registry.example/app:1\n        command: [sh, -c, 'exec java $EXTRA -jar /app/app.jar']\n", "command java"},
		{"args with -jar only", "        image: registry.example/app:1\n        args: [-jar, /srv/service.jar, --server.port=8080]\n", "argument -jar"},
		{"args with JVM flags", "        image: registry.example/app:1\n        args: [-Xmx512m, -cp, /app/lib/*, com.example.Main]\n", "argument -Xmx512m"},
		{"JVM flags in another variable", "        image: registry.example/app:1\n        env: [{name: OPTS, value: '-Xms256m -XX:+UseG1GC'}]\n", "env OPTS"},
		{"node", "        image: registry.example/app:1\n        command: [node, server.js]\n        env: [{name: NODE_OPTIONS, value: --max-old-space-size=512}]\n", ""},
		{"a word that only contains java", "        image: registry.example/app:1\n        args: [--javascript-engine=v8, --jar-dir=/tmp]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := realManifest("Deployment", "web", "3", "", tc.spec+
				"        livenessProbe: {httpGet: {path: /live, port: 8080}, periodSeconds: 10, failureThreshold: 3}\n", "")
			inv, err := Parse("app.yaml", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			got := only(Lint(inv, Config{}), "PG004")
			if tc.says == "" {
				if len(got) != 0 {
					t.Errorf("not a JVM, yet PG004: %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Severity != Warning || !strings.Contains(got[0].Message, "JVM container ("+tc.says) {
				t.Errorf("want one PG004 warning saying %q, got %+v", "JVM container ("+tc.says, got)
			}
		})
	}
}
