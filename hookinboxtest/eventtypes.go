package hookinboxtest

import (
	"os"
	"slices"
	"testing"

	"github.com/hookinbox/hookinbox/internal/stacktemplate"
	"github.com/hookinbox/hookinbox/processorfn"
)

// CheckEventTypes fails the test unless the business file (business.yaml,
// the one `hookinbox template` reads) lists under EventTypes exactly the
// event types mux handles, for every provider: the generated template's
// reconciler looks for the Stripe ones, so a handler added to the Mux
// and not to the file would never get a missed event back.
func CheckEventTypes(t testing.TB, mux *processorfn.Mux, businessFile string) {
	t.Helper()
	raw, err := os.ReadFile(businessFile)
	if err != nil {
		t.Fatalf("hookinboxtest: %v", err)
	}
	declared, err := stacktemplate.EventTypes(raw)
	if err != nil {
		t.Fatalf("hookinboxtest: %s: %v", businessFile, err)
	}
	for _, p := range eventTypesDiff(mux.EventTypes(), declared) {
		t.Errorf("hookinboxtest: %s: %s", businessFile, p)
	}
}

// eventTypesDiff names each type handled and not declared, and each type
// declared and not handled.
func eventTypesDiff(handled, declared map[string][]string) []string {
	var problems []string
	for provider, types := range handled {
		for _, typ := range types {
			if !slices.Contains(declared[provider], typ) {
				problems = append(problems, "the business handles "+provider+" "+typ+": add it to EventTypes "+provider+" and generate the template again")
			}
		}
	}
	for provider, types := range declared {
		for _, typ := range types {
			if !slices.Contains(handled[provider], typ) {
				problems = append(problems, "EventTypes "+provider+" lists "+typ+", which the business does not handle: remove it, or register a handler")
			}
		}
	}
	slices.Sort(problems)
	return problems
}
