// Package devstacktest gives tests the local emulators of devstack and
// fresh stacks on them. The emulators (and moto_server, stripe-mock) are
// shared by every test of a test binary and started by the first that
// asks; each stack has a name of its own and is deleted when its test
// ends, so tests sharing the emulators do not see each other's tables and
// queues. With -short every helper skips the test; when a server cannot
// start it fails the test with what to do.
package devstacktest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// ForTest returns the emulators shared by the test binary (devstack.Shared).
// TestMain may stop them with devstack.StopShared after m.Run; otherwise
// they stop when the binary exits.
func ForTest(t testing.TB) *devstack.Emulators {
	t.Helper()
	skipShort(t, "dynalite and local-aws-sqs")
	e, err := devstack.Shared()
	if err != nil {
		t.Fatalf("%v\n(%s)", err, installHint())
	}
	return e
}

// MotoForTest returns the moto_server shared by the test binary
// (devstack.SharedMoto).
func MotoForTest(t testing.TB) *devstack.Moto {
	t.Helper()
	skipShort(t, "moto_server")
	m, err := devstack.SharedMoto()
	if err != nil {
		t.Fatalf("%v\n(moto_server comes from pip: pip install 'moto[server]')", err)
	}
	return m
}

// StripeMockForTest returns the stripe-mock shared by the test binary
// (devstack.SharedStripeMock).
func StripeMockForTest(t testing.TB) *devstack.StripeMock {
	t.Helper()
	skipShort(t, "stripe-mock")
	m, err := devstack.SharedStripeMock()
	if err != nil {
		t.Fatalf("%v\n(stripe-mock is a tool line in go.mod: go build it with go tool stripe-mock)", err)
	}
	return m
}

func skipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("integration test: needs %s; run without -short", what)
	}
}

// NewTestStack creates the tables and queues of the repository's
// template.yaml on ForTest's emulators under a unique stack name ("t" and
// eight hex digits), and deletes them when the test ends.
func NewTestStack(t testing.TB) *devstack.Stack {
	t.Helper()
	e := ForTest(t)
	tpl, err := devstack.RootTemplate()
	if err != nil {
		t.Fatal(err)
	}
	return newTestStackFrom(t, e, tpl)
}

// newTestStackFrom is NewTestStack for the template tpl on the emulators e.
func newTestStackFrom(t testing.TB, e *devstack.Emulators, tpl *samtemplate.Template) *devstack.Stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := e.CreateStack(ctx, tpl, devstack.UniqueStackName())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Delete(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestTable returns a DynamoDB client for ForTest's emulators and the name
// of the template's table logicalID in a fresh NewTestStack.
func TestTable(t testing.TB, logicalID string) (*dynamodb.Client, string) {
	t.Helper()
	name, ok := NewTestStack(t).Tables[logicalID]
	if !ok {
		t.Fatalf("template.yaml has no table %s", logicalID)
	}
	return ForTest(t).DynamoDB(), name
}

// SkipOnMoto skips t when e is moto_server, naming the quirk (one of
// devstack.MotoRacyConditions, ...) that makes the test meaningless there;
// on the other family it does nothing.
func SkipOnMoto(t testing.TB, e *devstack.Emulators, quirk string) {
	t.Helper()
	if quirk == devstack.MotoRacyConditions && !e.RacyConditions() {
		return // the harness serialises moto's DynamoDB
	}
	if e.Family == devstack.FamilyMoto {
		t.Skipf("skipped on moto: %s (docs/contributing.md, The local emulators and how they differ from AWS)", quirk)
	}
}

// installHint says what to do when the emulators do not start, in
// hookinbox's tree or in a team's module alike.
func installHint() string {
	where := "a directory of your user cache"
	if root, err := devstack.RepoRoot(""); err == nil {
		if dir, err := devstack.EmulatorDir(root); err == nil {
			where = dir
		}
	}
	return "the emulators need Node.js 20 with npm in PATH; they install once into " + where +
		" (delete it to install them again); or run the tests on moto_server with HOOKINBOX_EMULATORS=moto, or point AWS_ENDPOINT_URL at LocalStack"
}
