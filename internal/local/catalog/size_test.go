package catalog

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bootstraps maps each function's logical ID to the package of its
// bootstrap, as the Makefile's build-<LogicalId> target builds it.
var bootstraps = map[string]string{
	"ReceiverFunction":          "./functions/receiver",
	"ProcessorFunction":         "./functions/processor",
	"DlqReplayFunction":         "./functions/dlq-replay",
	"ReconcilerFunction":        "./functions/reconciler",
	"StripeEventBridgeFunction": "./functions/stripe-eventbridge",
}

// notInReceiver are packages (prefixes) the receiver must not link: each
// bootstrap links only its own function's wiring, and the receiver
// verifies, claims and enqueues, nothing else (no Stripe API client, no
// email, no other function's handler).
var notInReceiver = []string{
	"github.com/stripe/stripe-go/",
	"github.com/aws/aws-sdk-go-v2/service/sesv2",
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch",
	"github.com/hookinbox/hookinbox/internal/processor",
	"github.com/hookinbox/hookinbox/internal/ledger",
	"github.com/hookinbox/hookinbox/internal/replay",
	"github.com/hookinbox/hookinbox/internal/reconcile",
	"github.com/hookinbox/hookinbox/internal/shop",
	"github.com/hookinbox/hookinbox/effects",
	"testing",
}

// notInReconciler are packages the reconciler must not link: it runs none
// of the shop's effects.
var notInReconciler = []string{
	"github.com/aws/aws-sdk-go-v2/service/sesv2",
	"github.com/hookinbox/hookinbox/effects",
	"github.com/hookinbox/hookinbox/internal/ledger",
	"github.com/hookinbox/hookinbox/internal/processor",
	"github.com/hookinbox/hookinbox/internal/shop",
}

// TestFunctionLinks reports the packages every function links and checks
// what the receiver and the reconciler must not link.
func TestFunctionLinks(t *testing.T) {
	root := repoRoot(t)
	for id, pkg := range bootstraps {
		deps := goListDeps(t, root, pkg)
		t.Logf("%-20s %s links %d packages", id, pkg, len(deps))
		for _, d := range deps {
			if d == "testing" {
				t.Errorf("%s links package testing", id)
			}
			if strings.HasPrefix(d, "github.com/hookinbox/hookinbox/internal/local") {
				t.Errorf("%s links %s, which is behind the fence (internal/local serves only local runs and tests)", id, d)
			}
			if strings.HasPrefix(d, "github.com/hookinbox/") && (strings.HasSuffix(d, "test") || strings.HasSuffix(d, "fuzz")) {
				t.Errorf("%s links the test package %s (inboxtest's in-memory store, ...)", id, d)
			}
		}
	}
	for _, d := range goListDeps(t, root, bootstraps["ReconcilerFunction"]) {
		if slices.Contains(notInReconciler, d) {
			t.Errorf("the reconciler links %s", d)
		}
	}
	for _, d := range goListDeps(t, root, bootstraps["ReceiverFunction"]) {
		for _, bad := range notInReceiver {
			if d == strings.TrimSuffix(bad, "/") || strings.HasPrefix(d, bad) || strings.HasPrefix(d, bad+"/") {
				t.Errorf("the receiver links %s", d)
			}
		}
	}
}

// TestCLILinksNoTesting checks that the hookinbox CLI, which runs the
// local stack, links no test code: test helpers live in _test.go files or
// ...test packages (devstacktest, pipelinetest).
func TestCLILinksNoTesting(t *testing.T) {
	for _, d := range goListDeps(t, repoRoot(t), "./cmd/hookinbox") {
		if d == "testing" {
			t.Errorf("./cmd/hookinbox links package testing; see `go list -deps ./cmd/hookinbox`")
		}
	}
}

// TestBootstrapsMatchMakefile keeps bootstraps equal to the packages the
// Makefile's build-<LogicalId> targets build (pkg_<LogicalId> := ...).
func TestBootstrapsMatchMakefile(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(mk), "\n") {
		name, pkg, ok := strings.Cut(line, ":=")
		if name = strings.TrimSpace(name); ok && strings.HasPrefix(name, "pkg_") {
			got[strings.TrimPrefix(name, "pkg_")] = strings.TrimSpace(pkg)
		}
	}
	if diff := cmp.Diff(bootstraps, got); diff != "" {
		t.Errorf("bootstraps (-) vs the Makefile's pkg_<LogicalId> (+):\n%s", diff)
	}
}

func goListDeps(t *testing.T, root, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}
