package custombusiness_test

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChaos runs `hookinbox chaos` on this module's stack: a generated
// corpus (checkouts, Shopify orders, and events the business ignores)
// delivered twice, shuffled, with an extra SQS copy of each, ends as one
// in-order delivery of each left it, on a second stack of this template
// with these functions.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds the functions and runs two local stacks")
	}
	crm := &crmCalls{paths: map[string]int{}}
	srv := httptest.NewServer(crm)
	defer srv.Close()
	corpus := filepath.Join(t.TempDir(), "events.jsonl")
	gen, err := exec.Command("go", "tool", "hookinbox", "chaos", "--generate", "40", "--seed", "29").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corpus, gen, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "hookinbox", "chaos", "--events", corpus, "--seed", "29",
		"--template", "template.yaml", "--parameter", "CrmUrl="+srv.URL).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "verdict: SAME") {
		t.Fatalf("hookinbox chaos: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "DONE ") {
		t.Errorf("no event of the corpus ended DONE: the business handled nothing\n%s", out)
	}
	if crm.count("/contacts") == 0 || crm.count("/orders") == 0 {
		t.Errorf("the CRM got %v, want the corpus's contacts and orders", crm.paths)
	}
}
