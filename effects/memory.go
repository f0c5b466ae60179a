package effects

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// MemoryLedger is an effect ledger in memory, for unit tests: it behaves
// as the processor's ledger in DynamoDB does. It is safe for concurrent use. Records never expire.
type MemoryLedger struct {
	mu   sync.Mutex
	recs map[webhook.Key]map[string]Record
	// intents are the at-most-once effects started and not finished, by
	// event and effect: the attempt that started each.
	intents map[string]string
	// running serializes calls for the same event and effect across runners.
	running map[string]*sync.Mutex
}

// NewMemoryLedger returns an empty in-memory ledger.
func NewMemoryLedger() *MemoryLedger {
	return &MemoryLedger{recs: map[webhook.Key]map[string]Record{}, intents: map[string]string{}, running: map[string]*sync.Mutex{}}
}

// For returns the Runner of the event key.
func (m *MemoryLedger) For(key webhook.Key) Runner {
	return &memoryRunner{m: m, key: key, attempt: newAttemptID()}
}

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
	m       *MemoryLedger
	key     webhook.Key
	attempt string
}

func (r *memoryRunner) Run(ctx context.Context, e Effect) error {
	if err := e.check(r.key); err != nil {
		return err
	}
	return r.do(ctx, e.Name, e.AtMostOnce, e.Fn)
}

func (r *memoryRunner) do(ctx context.Context, name string, atMostOnce bool, fn func(context.Context, string) (string, error)) error {
	m, id := r.m, string(r.key)+"\x00"+name
	m.mu.Lock()
	lock, ok := m.running[id]
	if !ok {
		lock = new(sync.Mutex)
		m.running[id] = lock
	}
	m.mu.Unlock()
	lock.Lock()
	defer lock.Unlock()

	m.mu.Lock()
	_, done := m.recs[r.key][name]
	started, open := m.intents[id]
	if atMostOnce && !done && !open {
		m.intents[id] = r.attempt
	}
	m.mu.Unlock()
	switch {
	case done:
		return nil
	case atMostOnce && open && started != r.attempt:
		return outcomeUnknown(r.key, name, time.Time{}, nil)
	}
	ik := IdempotencyKey(r.key, name)
	res, err := fn(ctx, ik)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err != nil && atMostOnce && !IsNotDone(err):
		return outcomeUnknown(r.key, name, time.Time{}, err)
	case err != nil:
		if atMostOnce {
			delete(m.intents, id) // not done: released
		}
		return fmt.Errorf("effect %s of %s: %w", name, r.key, err)
	}
	delete(m.intents, id)
	if m.recs[r.key] == nil {
		m.recs[r.key] = map[string]Record{}
	}
	m.recs[r.key][name] = Record{Effect: name, Key: r.key, IdempotencyKey: ik, Result: res}
	return nil
}
