package iamcheck

import (
	"os"
	"sync"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

var project struct {
	once sync.Once
	tpl  *samtemplate.Template
	err  error
}

// recorded returns template.yaml as the SAM transform deploys it and the
// requests the integration tests recorded (make test-iam, make test);
// without records the test is skipped, saying so.
func recorded(t *testing.T) (*samtemplate.Template, []Recorded) {
	t.Helper()
	dir := os.Getenv(CheckVariable)
	if dir == "" {
		t.Skipf("no recorded requests to check: %s is not set (make test-iam and make test record the integration tests' requests, then run this check)", CheckVariable)
	}
	recs, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s=%s holds no records: did the integration tests run with %s set?", CheckVariable, dir, RecordVariable)
	}
	project.once.Do(func() { project.tpl, project.err = samtemplate.Translate("../../../template.yaml") })
	if project.err != nil {
		t.Fatal(project.err)
	}
	return project.tpl, recs
}

// TestRecordedRequestsAllowedAndEveryGrantUsed: every request a function
// made in the integration tests is one its role, as SAM deploys
// template.yaml, allows; every grant is used by some request or its
// function's Metadata says why it is kept.
func TestRecordedRequestsAllowedAndEveryGrantUsed(t *testing.T) {
	tpl, recs := recorded(t)
	rep := Check(tpl, recs)
	for _, p := range rep.Problems {
		t.Error(p)
	}
	for _, r := range rep.Refused {
		t.Error("refused: " + r)
	}
	for _, u := range rep.Unused {
		t.Error("unused: " + u)
	}
	t.Logf("%d stacks recorded, %d grants checked", len(recs), len(rep.Grants))
}

// TestRecordedRequestsNeedEveryGrant removes each action entry of each
// role's statements in turn: the check must then fail, refusing a request
// that needed it or naming the exemption that explained it.
func TestRecordedRequestsNeedEveryGrant(t *testing.T) {
	tpl, recs := recorded(t)
	rep := Check(tpl, recs)
	if !rep.OK() {
		t.Skip("TestRecordedRequestsAllowedAndEveryGrantUsed fails: fix it first")
	}
	for _, g := range rep.Grants {
		if Without(tpl, recs, g).OK() {
			t.Errorf("without %s the check passes: a grant nothing needs", g)
		}
	}
}
