package devstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// shared is a server started once per process by the first caller.
type shared[S interface{ Stop() error }] struct {
	mu  sync.Mutex
	s   S
	err error
	ok  bool // s or err is set
}

func (sh *shared[S]) get(start func(context.Context) (S, error)) (S, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.ok {
		// Generous: the first start may run npm ci or build a tool.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		sh.s, sh.err = start(ctx)
		sh.ok = true
	}
	return sh.s, sh.err
}

func (sh *shared[S]) stop() error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, started := sh.s, sh.ok && sh.err == nil
	var zero S
	sh.s, sh.err, sh.ok = zero, nil, false
	if !started {
		return nil
	}
	return s.Stop()
}

var (
	sharedEmulators  shared[*Emulators]
	sharedMoto       shared[*Moto]
	sharedStripeMock shared[*StripeMock]
)

// Shared returns emulators shared by every caller in the process, started
// (Start with default Options) by the first call. They stop at StopShared,
// or when the process exits (the node process sees its stdin close).
// Endpoints in AWS_ENDPOINT_URL* are used instead when set.
func Shared() (*Emulators, error) {
	return sharedEmulators.get(func(ctx context.Context) (*Emulators, error) { return Start(ctx, Options{}) })
}

// StopShared stops the emulators Shared started, if any. Tests call it
// from TestMain after m.Run.
func StopShared() error { return sharedEmulators.stop() }

// SharedMoto is Shared for a moto_server of its own (StartMoto).
func SharedMoto() (*Moto, error) {
	return sharedMoto.get(func(ctx context.Context) (*Moto, error) { return StartMoto(ctx, Options{}) })
}

// StopSharedMoto stops the moto_server SharedMoto started, if any.
func StopSharedMoto() error { return sharedMoto.stop() }

// SharedStripeMock is Shared for stripe-mock (startStripeMock).
func SharedStripeMock() (*StripeMock, error) {
	return sharedStripeMock.get(func(ctx context.Context) (*StripeMock, error) { return startStripeMock(ctx, Options{}) })
}

// StopSharedStripeMock stops the stripe-mock SharedStripeMock started, if
// any.
func StopSharedStripeMock() error { return sharedStripeMock.stop() }

var rootTemplate struct {
	sync.Mutex
	tpl *samtemplate.Template
}

// RootTemplate returns the repository's template.yaml (see RepoRoot),
// parsed by the first call.
func RootTemplate() (*samtemplate.Template, error) {
	rootTemplate.Lock()
	defer rootTemplate.Unlock()
	if rootTemplate.tpl != nil {
		return rootTemplate.tpl, nil
	}
	root, err := RepoRoot("")
	if err != nil {
		return nil, err
	}
	tpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, fmt.Errorf("load template.yaml: %w", err)
	}
	rootTemplate.tpl = tpl
	return tpl, nil
}

// UniqueStackName returns "t" followed by eight random hex digits.
func UniqueStackName() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "t" + hex.EncodeToString(b)
}

// Quirks of moto_server that make a test meaningless on it (see
// TestMotoQuirks and docs/contributing.md, "The local emulators and how they differ from AWS");
// devstacktest.SkipOnMoto takes one of them.
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
