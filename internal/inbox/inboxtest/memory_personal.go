package inboxtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// memoryPersonal is Memory's subject index, removal markers and erasure
// records.
type memoryPersonal struct {
	subjects map[string]map[webhook.Key]bool // by hash
	removed  map[webhook.Key]bool            // payloads removed on purpose
	erasures []inbox.Erasure
}

// IndexSubjects implements inbox.Store.
func (m *Memory) IndexSubjects(_ context.Context, key webhook.Key, hashes []string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.personal.subjects == nil {
		m.personal.subjects = map[string]map[webhook.Key]bool{}
	}
	for _, h := range hashes {
		if m.personal.subjects[h] == nil {
			m.personal.subjects[h] = map[webhook.Key]bool{}
		}
		m.personal.subjects[h][key] = true
	}
	return nil
}

// SubjectEvents implements inbox.Store.
func (m *Memory) SubjectEvents(_ context.Context, hashes []string) ([]webhook.Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []webhook.Key
	for _, h := range hashes {
		for k := range m.personal.subjects[h] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// ProviderEvents implements inbox.Store.
func (m *Memory) ProviderEvents(_ context.Context, provider string) ([]webhook.Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []webhook.Key
	for k, it := range m.items {
		if it.Provider == provider {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Footprint implements inbox.Store.
func (m *Memory) Footprint(_ context.Context, key webhook.Key) (inbox.Footprint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.footprint(key)
}

func (m *Memory) footprint(key webhook.Key) (inbox.Footprint, error) {
	it, ok := m.items[key]
	if !ok {
		return inbox.Footprint{}, fmt.Errorf("footprint %s: %w", key, inbox.ErrNotFound)
	}
	_, separate := m.payloads[key]
	return inbox.Footprint{Item: it, Inline: it.Payload != nil, PayloadItem: separate, Object: it.PayloadObject}, nil
}

// RemovePayload implements inbox.Store; Memory keeps no effect results.
func (m *Memory) RemovePayload(_ context.Context, key webhook.Key, why string, at time.Time) (inbox.Footprint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, err := m.footprint(key)
	if err != nil {
		return inbox.Footprint{}, err
	}
	if why == inbox.RemovedExpired && !(f.Item.Status == inbox.Done || f.Item.Status == inbox.Ignored) {
		return inbox.Footprint{}, fmt.Errorf("remove payload %s: %s, not finished: %w", key, f.Item.Status, inbox.ErrClaimChanged)
	}
	delete(m.objects, f.Object)
	delete(m.payloads, key)
	if m.personal.removed == nil {
		m.personal.removed = map[webhook.Key]bool{}
	}
	m.personal.removed[key] = true
	it := f.Item
	it.Payload, it.PayloadObject = nil, ""
	if it.PayloadRemoved == "" { // the first removal's reason stays
		it.PayloadRemoved, it.RemovedAt = why, inbox.Normalize(inbox.Item{RemovedAt: at}).RemovedAt
	}
	m.items[key] = it
	return f, nil
}

// Retained implements inbox.Store.
func (m *Memory) Retained(_ context.Context, cutoff time.Time, limit int) ([]webhook.Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []webhook.Key
	for k, it := range m.items {
		if (it.Status == inbox.Done || it.Status == inbox.Ignored) && it.PayloadRemoved == "" && it.ProcessedAt.Before(cutoff) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) > limit {
		keys = keys[:limit]
	}
	return keys, nil
}

// RecordErasure implements inbox.Store.
func (m *Memory) RecordErasure(_ context.Context, e inbox.Erasure) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.At = e.At.UTC()
	m.personal.erasures = append(m.personal.erasures, e)
	return nil
}

// Erasures implements inbox.Store.
func (m *Memory) Erasures(context.Context) ([]inbox.Erasure, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.personal.erasures), nil
}
