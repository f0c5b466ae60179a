package inboxtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// Memory is an in-memory inbox.Store for fast unit tests. It keeps the same
// conditions as the DynamoDB store; the conformance suite checks that.
type Memory struct {
	mu       sync.Mutex
	items    map[webhook.Key]inbox.Item
	payloads map[webhook.Key]payload
	objects  map[string][]byte // the body bucket's objects, by name
	personal memoryPersonal    // memory_personal.go
}

// payload is a stored payload.
type payload struct {
	raw []byte
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{items: map[webhook.Key]inbox.Item{}, payloads: map[webhook.Key]payload{}, objects: map[string][]byte{}}
}

var _ inbox.Store = (*Memory)(nil)

// Claim implements inbox.Store.
func (m *Memory) Claim(_ context.Context, c inbox.Claim) (inbox.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := c.Event.Key()
	if err := inbox.CheckSubjects(c.Subjects); err != nil {
		return inbox.Item{}, fmt.Errorf("claim %s: %w", key, err)
	}
	if old, ok := m.items[key]; ok && !(c.Event.IDOnly && inbox.Renewable(old, c.At)) {
		return old, fmt.Errorf("claim %s: %w", key, inbox.ErrAlreadyClaimed)
	}
	it := c.NewItem()
	it.Payload = clone(it.Payload)
	m.items[key] = it
	return it, nil
}

// PutPayload implements inbox.Store.
func (m *Memory) PutPayload(_ context.Context, it inbox.Item, raw []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(raw) > inbox.MaxPayloadBytes {
		return m.putObject(it, raw)
	}
	if m.personal.removed[it.Key] {
		return nil
	}
	p, ok := m.payloads[it.Key]
	if !ok {
		p.raw = append([]byte(nil), raw...)
	}
	m.payloads[it.Key] = p
	return nil
}

// putObject is PutPayload of a payload over inbox.MaxPayloadBytes.
func (m *Memory) putObject(it inbox.Item, raw []byte) error {
	if it.PayloadObject == "" {
		return fmt.Errorf("put payload %s: %w", it.Key, inbox.ErrNoBodyLocation)
	}
	name := inbox.BodyObject(it.Key, inbox.PayloadSHA256(raw))
	if name != it.PayloadObject {
		cur, ok := m.items[it.Key]
		switch {
		case !ok:
			return fmt.Errorf("put payload %s: %w", it.Key, inbox.ErrNotFound)
		case cur.PayloadRemoved != "":
			return nil
		}
		cur.PayloadObject = name
		m.items[it.Key] = cur
	}
	m.objects[name] = clone(raw)
	return nil
}

// Payload implements inbox.Store.
func (m *Memory) Payload(_ context.Context, key webhook.Key) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if it, ok := m.items[key]; ok && it.Payload != nil {
		return clone(it.Payload), nil
	} else if raw, stored := m.objects[it.PayloadObject]; ok && stored {
		if inbox.BodyObject(key, inbox.PayloadSHA256(raw)) != it.PayloadObject {
			return nil, fmt.Errorf("payload %s: the stored body does not match the hash in its name", key)
		}
		return clone(raw), nil
	}
	p, ok := m.payloads[key]
	if !ok {
		return nil, fmt.Errorf("payload %s: %w", key, inbox.ErrNotFound)
	}
	return clone(p.raw), nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// Get implements inbox.Store.
func (m *Memory) Get(_ context.Context, key webhook.Key) (inbox.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok {
		return inbox.Item{}, fmt.Errorf("get %s: %w", key, inbox.ErrNotFound)
	}
	return it, nil
}

// MarkEnqueued implements inbox.Store.
func (m *Memory) MarkEnqueued(_ context.Context, key webhook.Key, cutoff, now time.Time, statuses ...inbox.Status) (inbox.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok {
		return inbox.Item{}, fmt.Errorf("mark enqueued %s: %w", key, inbox.ErrNotFound)
	}
	if !slices.Contains(inbox.Enqueueable(statuses), it.Status) || it.EnqueuedAt.UnixMilli() > cutoff.UnixMilli() {
		return it, fmt.Errorf("mark enqueued %s: %w", key, inbox.ErrNotDue)
	}
	it.EnqueuedAt = now
	it = inbox.Normalize(it)
	m.items[key] = it
	return it, nil
}

// Lease implements inbox.Store.
func (m *Memory) Lease(_ context.Context, key webhook.Key, owner string, now time.Time, d time.Duration) (inbox.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok {
		return inbox.Item{}, fmt.Errorf("lease %s: %w", key, inbox.ErrNotFound)
	}
	if err := inbox.LeaseRefusal(it, now); err != nil {
		return it, fmt.Errorf("lease %s: %w", key, err)
	}
	if it.Status == inbox.Dead {
		// Redriven from the DLQ by a person: the failure counts start afresh.
		it.Attempts, it.InfraFailures = 0, 0
	}
	it.Status = inbox.Processing
	it.TakenFrom = it.LeaseOwner
	it.LeaseOwner = owner
	it.LeaseUntil = now.Add(d)
	it.Attempts++
	it.ProcessedAt, it.Outcome = time.Time{}, ""
	it = inbox.Normalize(it)
	m.items[key] = it
	return it, nil
}

// Finish implements inbox.Store.
func (m *Memory) Finish(_ context.Context, key webhook.Key, owner string, r inbox.Result) (inbox.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok || it.Status != inbox.Processing || it.LeaseOwner != owner {
		return it, fmt.Errorf("finish %s: %w", key, inbox.ErrLeaseLost)
	}
	it = inbox.Normalize(finished(it, r))
	m.items[key] = it
	return it, nil
}

// EndHold implements inbox.Store.
func (m *Memory) EndHold(_ context.Context, key webhook.Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	switch {
	case !ok:
		return fmt.Errorf("end hold %s: %w", key, inbox.ErrNotFound)
	case it.Status != inbox.Ignored:
		return fmt.Errorf("end hold %s: %w", key, inbox.ErrNotHeld)
	}
	it.RenewAfter = time.Time{}
	m.items[key] = it
	return nil
}

// Requeue implements inbox.Store.
func (m *Memory) Requeue(_ context.Context, key webhook.Key, now time.Time) (inbox.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	if !ok {
		return inbox.Item{}, fmt.Errorf("requeue %s: %w", key, inbox.ErrNotFound)
	}
	switch {
	case it.Status == inbox.Done:
		return it, fmt.Errorf("requeue %s: %w", key, inbox.ErrFinished)
	case errors.Is(inbox.LeaseRefusal(it, now), inbox.ErrLeaseHeld):
		return it, fmt.Errorf("requeue %s: %w", key, inbox.ErrLeaseHeld)
	}
	it.Status = inbox.Failed
	it.LeaseOwner, it.LeaseUntil = "", time.Time{}
	it.Attempts, it.InfraFailures = 0, 0
	it.EnqueuedAt = now
	it.ProcessedAt, it.Outcome = time.Time{}, ""
	it = inbox.Normalize(it)
	m.items[key] = it
	return it, nil
}

// Pending implements inbox.Store.
func (m *Memory) Pending(ctx context.Context, cutoff time.Time, limit int) ([]inbox.Item, error) {
	return inbox.PendingAll(ctx, m, cutoff, limit)
}

// PendingShard implements inbox.Store.
func (m *Memory) PendingShard(_ context.Context, shard int, cutoff time.Time, limit int) ([]inbox.Item, error) {
	if shard < 0 || shard >= inbox.PendingShards {
		return nil, fmt.Errorf("pending shard %d: not in [0, %d)", shard, inbox.PendingShards)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []inbox.Item
	for _, it := range m.items {
		if !it.Status.Final() && inbox.ShardOf(it.Key) == shard && it.EnqueuedAt.UnixMilli() < cutoff.UnixMilli() {
			out = append(out, inbox.PendingView(it))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EnqueuedAt.Before(out[j].EnqueuedAt) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// finished returns it after the lease ended with r.
func finished(it inbox.Item, r inbox.Result) inbox.Item {
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
	if r.Uncounted {
		it.Attempts--
	}
	if r.Indexed {
		it.Subjects = nil
	}
	if r.Status.Final() {
		it.ProcessedAt = r.At
	} else {
		it.EnqueuedAt = r.At
	}
	return it
}
