package inbox

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// Memory is an in-memory Store for fast unit tests. It keeps the same
// conditions as the DynamoDB store; the conformance suite checks that.
type Memory struct {
	mu       sync.Mutex
	items    map[webhook.Key]Item
	payloads map[webhook.Key]payload
	objects  map[string][]byte // the body bucket's objects, by name
	personal memoryPersonal    // memory_personal.go
}

// payload is a stored payload and the claim it belongs to.
type payload struct {
	raw        []byte
	receivedAt time.Time
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{items: map[webhook.Key]Item{}, payloads: map[webhook.Key]payload{}, objects: map[string][]byte{}}
}

var _ Store = (*Memory)(nil)

// Claim implements Store.
func (m *Memory) Claim(_ context.Context, c Claim) (Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := c.Event.Key()
	if old, ok := m.items[key]; ok && !(c.Event.IDOnly && renewable(old, c.At)) {
		return old, fmt.Errorf("claim %s: %w", key, ErrAlreadyClaimed)
	}
	it := c.NewItem()
	it.Payload = clone(it.Payload)
	m.items[key] = it
	return it, nil
}

// PutPayload implements Store.
func (m *Memory) PutPayload(_ context.Context, it Item, raw []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(raw) > MaxPayloadBytes {
		if it.PayloadObject == "" {
			return fmt.Errorf("put payload %s: %w", it.Key, ErrNoBodyLocation)
		}
		m.objects[it.PayloadObject] = clone(raw)
		return nil
	}
	if m.personal.removed[it.Key] {
		return nil
	}
	p, ok := m.payloads[it.Key]
	if !ok {
		p.raw = append([]byte(nil), raw...)
	}
	p.receivedAt = utc(it.ReceivedAt)
	m.payloads[it.Key] = p
	return nil
}

// Payload implements Store.
func (m *Memory) Payload(_ context.Context, key webhook.Key) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if it, ok := m.items[key]; ok && it.Payload != nil {
		return clone(it.Payload), nil
	} else if raw, stored := m.objects[it.PayloadObject]; ok && stored {
		return clone(raw), nil
	}
	p, ok := m.payloads[key]
	if !ok {
		return nil, fmt.Errorf("payload %s: %w", key, ErrNotFound)
	}
	return clone(p.raw), nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// Release implements Store.
func (m *Memory) Release(_ context.Context, it Item) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.items[it.Key]
	if !ok || old.Status != Received || !old.ReceivedAt.Equal(it.ReceivedAt) {
		return fmt.Errorf("release %s: %w", it.Key, ErrClaimChanged)
	}
	delete(m.items, it.Key)
	if p, ok := m.payloads[it.Key]; ok && p.receivedAt.Equal(it.ReceivedAt) {
		delete(m.payloads, it.Key)
	}
	return nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key webhook.Key) (Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok {
		return Item{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	return it, nil
}

// MarkEnqueued implements Store.
func (m *Memory) MarkEnqueued(_ context.Context, key webhook.Key, cutoff, now time.Time, statuses ...Status) (Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok {
		return Item{}, fmt.Errorf("mark enqueued %s: %w", key, ErrNotFound)
	}
	if !statusIn(it.Status, enqueueable(statuses)) || it.EnqueuedAt.UnixMilli() > cutoff.UnixMilli() {
		return it, fmt.Errorf("mark enqueued %s: %w", key, ErrNotDue)
	}
	it.EnqueuedAt = now
	it = normalize(it)
	m.items[key] = it
	return it, nil
}

// Lease implements Store.
func (m *Memory) Lease(_ context.Context, key webhook.Key, owner string, now time.Time, d time.Duration) (Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok {
		return Item{}, fmt.Errorf("lease %s: %w", key, ErrNotFound)
	}
	if err := leaseRefusal(it, now); err != nil {
		return it, fmt.Errorf("lease %s: %w", key, err)
	}
	if it.Status == Dead {
		// Redriven from the DLQ by a person: the failure counts start afresh.
		it.Attempts, it.InfraFailures = 0, 0
	}
	it.Status = Processing
	it.TakenFrom = it.LeaseOwner
	it.LeaseOwner = owner
	it.LeaseUntil = now.Add(d)
	it.Attempts++
	it.ProcessedAt, it.Outcome = time.Time{}, ""
	it = normalize(it)
	m.items[key] = it
	return it, nil
}

// Finish implements Store.
func (m *Memory) Finish(_ context.Context, key webhook.Key, owner string, r Result) (Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok || it.Status != Processing || it.LeaseOwner != owner {
		return it, fmt.Errorf("finish %s: %w", key, ErrLeaseLost)
	}
	it = normalize(finished(it, r))
	m.items[key] = it
	return it, nil
}

// EndHold implements Store.
func (m *Memory) EndHold(_ context.Context, key webhook.Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	switch {
	case !ok:
		return fmt.Errorf("end hold %s: %w", key, ErrNotFound)
	case it.Status != Ignored:
		return fmt.Errorf("end hold %s: %w", key, ErrNotHeld)
	}
	it.RenewAfter = time.Time{}
	m.items[key] = it
	return nil
}

// Requeue implements Store.
func (m *Memory) Requeue(_ context.Context, key webhook.Key, now time.Time) (Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok {
		return Item{}, fmt.Errorf("requeue %s: %w", key, ErrNotFound)
	}
	switch {
	case it.Status == Done:
		return it, fmt.Errorf("requeue %s: %w", key, ErrFinished)
	case it.Status == Processing && leaseLive(it, now):
		return it, fmt.Errorf("requeue %s: %w", key, ErrLeaseHeld)
	}
	it.Status = Failed
	it.LeaseOwner, it.LeaseUntil = "", time.Time{}
	it.Attempts, it.InfraFailures = 0, 0
	it.EnqueuedAt = now
	it.ProcessedAt, it.Outcome = time.Time{}, ""
	it = normalize(it)
	m.items[key] = it
	return it, nil
}

// Pending implements Store.
func (m *Memory) Pending(ctx context.Context, cutoff time.Time, limit int) ([]Item, error) {
	return pendingAll(ctx, m, cutoff, limit)
}

// PendingShard implements Store.
func (m *Memory) PendingShard(_ context.Context, shard int, cutoff time.Time, limit int) ([]Item, error) {
	if shard < 0 || shard >= PendingShards {
		return nil, fmt.Errorf("pending shard %d: not in [0, %d)", shard, PendingShards)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Item
	for _, it := range m.items {
		if !it.Status.Final() && ShardOf(it.Key) == shard && it.EnqueuedAt.UnixMilli() < cutoff.UnixMilli() {
			out = append(out, pendingView(it))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EnqueuedAt.Before(out[j].EnqueuedAt) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// leaseRefusal says why it cannot be leased at now, or nil.
func leaseRefusal(it Item, now time.Time) error {
	switch {
	case it.Status == Done || it.Status == Ignored:
		return ErrFinished
	case it.Status == Processing && leaseLive(it, now):
		return ErrLeaseHeld
	}
	return nil
}

// finished returns it after the lease ended with r.
func finished(it Item, r Result) Item {
	it.Status = r.Status
	it.LeaseOwner, it.LeaseUntil = "", time.Time{}
	it.Outcome = r.Outcome
	it.RenewAfter = r.RenewAfter
	if r.Error != "" {
		it.LastError = r.Error
	}
	if r.Infrastructure {
		it.InfraFailures++
	}
	if r.Status.Final() {
		it.ProcessedAt = r.At
	} else {
		it.EnqueuedAt = r.At
	}
	return it
}

// leaseLive reports whether it's lease has not ended at now, at the
// millisecond precision the table stores.
func leaseLive(it Item, now time.Time) bool {
	return it.LeaseUntil.UnixMilli() >= now.UnixMilli()
}

func enqueueable(statuses []Status) []Status {
	if len(statuses) == 0 {
		return []Status{Received}
	}
	return statuses
}

func statusIn(s Status, set []Status) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}
