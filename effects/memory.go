package effects

import (
	"context"
	"fmt"
	"sync"

	"github.com/hookinbox/hookinbox/webhook"
)

// MemoryLedger is the effect ledger in memory, with the Ledger's behaviour,
// for fast unit tests and the local demo. It is safe for concurrent use.
// Records never expire.
type MemoryLedger struct {
	mu   sync.Mutex
	recs map[webhook.Key]map[string]Record
	// running serializes calls for the same event and effect across runners.
	running map[string]*sync.Mutex
}

// NewMemoryLedger returns an empty in-memory ledger.
func NewMemoryLedger() *MemoryLedger {
	return &MemoryLedger{recs: map[webhook.Key]map[string]Record{}, running: map[string]*sync.Mutex{}}
}

// For returns the Runner of the event key.
func (m *MemoryLedger) For(key webhook.Key) Runner { return &memoryRunner{m: m, key: key} }

// Records returns the recorded effects of the event key, sorted by effect
// name.
func (m *MemoryLedger) Records(_ context.Context, key webhook.Key) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var recs []Record
	for _, r := range m.recs[key] {
		recs = append(recs, r)
	}
	sortRecords(recs)
	return recs, nil
}

type memoryRunner struct {
	m   *MemoryLedger
	key webhook.Key
}

func (r *memoryRunner) Do(ctx context.Context, name string, fn func(context.Context, string) error) error {
	return r.DoResult(ctx, name, func(ctx context.Context, ik string) (string, error) { return "", fn(ctx, ik) })
}

func (r *memoryRunner) DoResult(ctx context.Context, name string, fn func(context.Context, string) (string, error)) error {
	if name == "" {
		return invalidf("empty effect name for %s", r.key)
	}
	m := r.m
	m.mu.Lock()
	lock, ok := m.running[string(r.key)+"\x00"+name]
	if !ok {
		lock = new(sync.Mutex)
		m.running[string(r.key)+"\x00"+name] = lock
	}
	m.mu.Unlock()
	lock.Lock()
	defer lock.Unlock()

	m.mu.Lock()
	_, done := m.recs[r.key][name]
	m.mu.Unlock()
	if done {
		return nil
	}
	ik := IdempotencyKey(r.key, name)
	res, err := fn(ctx, ik)
	if err != nil {
		return fmt.Errorf("effect %s of %s: %w", name, r.key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recs[r.key] == nil {
		m.recs[r.key] = map[string]Record{}
	}
	m.recs[r.key][name] = Record{Effect: name, Key: r.key, IdempotencyKey: ik, Result: res}
	return nil
}
