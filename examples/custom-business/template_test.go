// Package custombusiness_test keeps this module's template.yaml what
// `hookinbox template` makes of hookinbox's template and business.yaml:
// hookinbox's stack as the required version ships it, with the CRM
// business's parameter, table, settings and rights put in. Run
// `make template` after upgrading hookinbox or editing business.yaml.
package custombusiness_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"example.com/custom-business/crm"

	"github.com/hookinbox/hookinbox/hookinboxtest"
)

// TestEventTypesAreTheMuxs: business.yaml's EventTypes, which the
// template's reconciler looks for, are the types the business handles.
func TestEventTypesAreTheMuxs(t *testing.T) {
	hookinboxtest.CheckEventTypes(t, (&crm.Business{}).Mux(), "business.yaml")
}

func TestTemplateIsGenerated(t *testing.T) {
	// What `make template` writes, from the hookinbox version go.mod requires.
	want, err := exec.Command("go", "tool", "hookinbox", "template", "--business", "business.yaml").Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		t.Fatalf("hookinbox template: %v\n%s", err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("hookinbox template: %v", err)
	}
	got, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("template.yaml is not what hookinbox's template and business.yaml generate; run: make template")
	}
	// Every function has its build-<LogicalId> target in the Makefile.
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^  (\w+):\n    Type: AWS::Serverless::Function`).FindAllStringSubmatch(string(want), -1) {
		if !strings.Contains(string(makefile), "build-"+m[1]+":") {
			t.Errorf("Makefile has no build-%s target", m[1])
		}
	}
}
