package house

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/hookinbox/hookinbox"

// layers are the module's packages from the bottom up, by directory
// prefix (docs/architecture.md, "Packages: the map"); a package is in the
// last layer whose prefix it has.
var layers = []struct {
	name     string
	prefixes []string
}{
	{"the rest: vocabulary, providers, the product", []string{""}},
	{"wiring", []string{"internal/lambdafn"}},
	{"the functions", []string{"receiverfn", "processorfn", "replayfn", "reconcilerfn", "eventbridgefn"}},
	{"businesses", []string{"internal/shop"}},
	{"what runs them", []string{"functions", "cmd", "cli", "hookinboxtest", "internal/local"}},
}

// layer returns the index in layers of the package in dir.
func layer(dir string) int {
	at := 0
	for i, l := range layers {
		for _, p := range l.prefixes {
			if p == "" || dir == p || strings.HasPrefix(dir, p+"/") {
				at = i
			}
		}
	}
	return at
}

// apart are imports that never happen although no layer forbids them:
// the processor reads what an event's parts (the business, the
// destinations) say in webhook's words, without knowing them.
var apart = map[[2]string]bool{{"internal/processor", "internal/destination"}: true}

// TestNoImportRunsBackUp: no package imports one of a higher layer (the
// product never imports a function's wiring, a function never imports a
// business or a tool), webhook imports nothing of ours, no import in
// apart is made, and a provider, built in or not, is written on the
// public packages alone, as a team's is. Tests may.
func TestNoImportRunsBackUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := dirOf(fields[0])
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module+"/") && imp != module {
				continue
			}
			to := dirOf(imp)
			if from == "webhook" {
				t.Errorf("webhook imports %s: it imports nothing of ours", to)
			}
			if onlyPublic(from) && strings.HasPrefix(to, "internal/") && !strings.HasPrefix(to, "internal/providers/") {
				t.Errorf("%s imports %s: a provider uses only what a team's provider can", from, to)
			}
			if apart[[2]string{from, to}] {
				t.Errorf("%s imports %s: it must not know it", from, to)
			}
			if lf, lt := layer(from), layer(to); lt > lf {
				t.Errorf("%s (%s) imports %s (%s), a higher layer", from, layers[lf].name, to, layers[lt].name)
			}
		}
	}
}

// dirOf returns the directory of the package path, "." for the root.
func dirOf(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

// onlyPublic reports whether the package in dir is a provider: the
// contract (provider, provider/sample) or a built-in one.
func onlyPublic(dir string) bool {
	return dir == "provider" || strings.HasPrefix(dir, "provider/") || strings.HasPrefix(dir, "internal/providers/")
}
