package catalog

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBootstrapsLinkNoTooling: every function imports the providers, and
// so provider/sample, the tooling contract their sample.go files
// implement; the linker leaves all of it out, since no function calls a
// Sender. A bootstrap that links a symbol of provider/sample, or a
// provider's Sender, has started to sign or sample in Lambda.
func TestBootstrapsLinkNoTooling(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds every bootstrap")
	}
	root := repoRoot(t)
	for id, pkg := range bootstraps {
		bin := filepath.Join(t.TempDir(), "bootstrap")
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		out, err := exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", bin, err)
		}
		for line := range strings.SplitSeq(string(out), "\n") {
			if strings.Contains(line, "hookinbox/provider/sample.") || strings.Contains(line, ".Sender") && strings.Contains(line, "hookinbox/internal/providers/") {
				t.Errorf("%s links %s", id, strings.TrimSpace(line))
			}
		}
	}
}
