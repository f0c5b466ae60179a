package devstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

var shared struct {
	sync.Mutex
	emu *Emulators
	err error
}

// ForTest returns emulators shared by every test in the test binary, started
// by the first call. They stop when the binary exits (the node process sees
// its stdin close) or at StopShared. With -short it skips the test; if the
// emulators cannot start it fails the test with what to do. Endpoints in
// AWS_ENDPOINT_URL* are used instead when set.
func ForTest(t testing.TB) *Emulators {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs dynalite and local-aws-sqs; run without -short")
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.emu == nil && shared.err == nil {
		// Generous: the first start may run npm ci.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		shared.emu, shared.err = Start(ctx, Options{})
	}
	if shared.err != nil {
		t.Fatalf("%v\n(run make test, or npm ci --prefix local and check that node is in PATH; or point AWS_ENDPOINT_URL at LocalStack)", shared.err)
	}
	return shared.emu
}

// StopShared stops the emulators ForTest started, if any. Call it from
// TestMain after m.Run; without it they stop when the test binary exits.
func StopShared() error {
	shared.Lock()
	defer shared.Unlock()
	e := shared.emu
	shared.emu, shared.err = nil, nil
	return e.Stop()
}

var templates struct {
	sync.Mutex
	tpl *samtemplate.Template
}

// NewTestStack creates the tables and queues of the repository's
// template.yaml on ForTest's emulators under a unique stack name ("t" and
// eight hex digits), and deletes them when the test ends.
func NewTestStack(t testing.TB) *Stack {
	t.Helper()
	e := ForTest(t)
	templates.Lock()
	tpl := templates.tpl
	if tpl == nil {
		root, err := repoRoot("")
		if err == nil {
			tpl, err = samtemplate.Load(filepath.Join(root, "template.yaml"))
		}
		if err != nil {
			templates.Unlock()
			t.Fatalf("load template.yaml: %v", err)
		}
		templates.tpl = tpl
	}
	templates.Unlock()
	return NewTestStackFrom(t, e, tpl)
}

// NewTestStackFrom is NewTestStack for the template tpl on the emulators e.
func NewTestStackFrom(t testing.TB, e *Emulators, tpl *samtemplate.Template) *Stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := e.CreateStack(ctx, tpl, UniqueStackName())
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

// UniqueStackName returns "t" followed by eight random hex digits.
func UniqueStackName() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("t%s", hex.EncodeToString(b))
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

// Quirks of moto_server that make a test meaningless on it (see
// TestMotoQuirks and docs/reliability.md, "Emulator quirks"); SkipOnMoto
// takes one of them.
const (
	// MotoRacyConditions: concurrent conditional writes on one item are
	// not serialised, so two racing claims or leases can both succeed.
	// Only stock moto_server has it: the harness's moto (StartMoto, when
	// python3 can import moto) takes DynamoDB's requests one at a time,
	// and SkipOnMoto skips nothing for it there.
	MotoRacyConditions = "moto does not serialise concurrent conditional writes on one item"
	// MotoFlatCapacity: every write consumes 1 unit whatever its size.
	MotoFlatCapacity = "moto reports 1 write unit whatever the item's size"
	// MotoNoMessageMove: StartMessageMoveTask answers 500.
	MotoNoMessageMove = "moto does not implement StartMessageMoveTask (DLQ redrive)"
)

// SkipOnMoto skips t when e is moto_server, naming the quirk that makes
// the test meaningless there; on the other family it does nothing.
func SkipOnMoto(t testing.TB, e *Emulators, quirk string) {
	t.Helper()
	if quirk == MotoRacyConditions && !e.racyConditions {
		return // the harness serialises moto's DynamoDB
	}
	if e.Family == FamilyMoto {
		t.Skipf("skipped on moto: %s (docs/reliability.md, Emulator quirks)", quirk)
	}
}
