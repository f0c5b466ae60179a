package inboxtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// memoryPersonal is Memory's subject index, removal markers, erasure
// progress and audit records.
type memoryPersonal struct {
	subjects     map[string]map[webhook.Key]bool // by hash
	removed      map[webhook.Key]bool            // payloads removed on purpose
	erasures     map[string]inbox.Erasure        // by At and SubjectHash
	progress     map[webhook.Key]inbox.Progress
	dataRequests map[string]inbox.DataRequest // by At and By
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

// SubjectEvents implements inbox.Store with the same sources as the
// DynamoDB store (the pending shards, then each hash), each in key
// order; the cursor is "<source> <last key>".
func (m *Memory) SubjectEvents(_ context.Context, hashes []string, cursor string, limit int) ([]webhook.Key, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	source, after := 0, ""
	if cursor != "" {
		n, key, _ := strings.Cut(cursor, " ")
		var err error
		if source, err = strconv.Atoi(n); err != nil || source >= inbox.PendingShards+len(hashes) {
			return nil, "", fmt.Errorf("not a cursor of these subjects' events: %q", cursor)
		}
		after = key
	}
	var all []webhook.Key // the source's keys, in order
	if source < inbox.PendingShards {
		for k, it := range m.items {
			if !it.Status.Final() && inbox.ShardOf(k) == source {
				all = append(all, k)
			}
		}
	} else {
		all = slices.Collect(maps.Keys(m.personal.subjects[hashes[source-inbox.PendingShards]]))
	}
	slices.Sort(all)
	var keys []webhook.Key
	last, read := webhook.Key(""), 0
	for _, k := range all {
		if string(k) <= after && after != "" {
			continue
		}
		if read == limit {
			break
		}
		read, last = read+1, k
		if source >= inbox.PendingShards || slices.ContainsFunc(m.items[k].Subjects, func(h string) bool { return slices.Contains(hashes, h) }) {
			keys = append(keys, k)
		}
	}
	if read == limit && last != all[len(all)-1] {
		return keys, fmt.Sprintf("%d %s", source, last), nil
	}
	if source+1 == inbox.PendingShards+len(hashes) {
		return keys, "", nil
	}
	return keys, strconv.Itoa(source + 1), nil
}

// About implements inbox.Store.
func (m *Memory) About(_ context.Context, key webhook.Key, hashes []string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range hashes {
		if slices.Contains(m.items[key].Subjects, h) || m.personal.subjects[h][key] {
			return true, nil
		}
	}
	return false, nil
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
	it := f.Item
	if it.Status != inbox.Done && it.Status != inbox.Ignored {
		if why == inbox.RemovedExpired {
			return inbox.Footprint{}, fmt.Errorf("remove payload %s: %s, not finished: %w", key, it.Status, inbox.ErrClaimChanged)
		}
		f.Marked = !it.EraseWhenFinished
		it.EraseWhenFinished = true
		m.items[key] = it
		f.Item = it
		return f, nil
	}
	delete(m.objects, f.Object)
	delete(m.objects, inbox.BodyObject(key, it.PayloadSHA256)) // the claim's own too, as the DynamoDB store
	delete(m.payloads, key)
	if m.personal.removed == nil {
		m.personal.removed = map[webhook.Key]bool{}
	}
	m.personal.removed[key] = true
	it.Payload, it.PayloadObject, it.EraseWhenFinished = nil, "", false
	if it.PayloadRemoved == "" { // the first removal's reason stays
		it.PayloadRemoved, it.RemovedAt = why, inbox.Normalize(inbox.Item{RemovedAt: at}).RemovedAt
	}
	m.items[key] = it
	return f, nil
}

// Retained implements inbox.Store.
func (m *Memory) Retained(_ context.Context, cutoff time.Time, limit int) ([]webhook.Key, error) {
	return m.finished(limit, func(it inbox.Item) bool { return !it.EraseWhenFinished && it.ProcessedAt.Before(cutoff) }), nil
}

// FinishedToErase implements inbox.Store.
func (m *Memory) FinishedToErase(_ context.Context, limit int) ([]webhook.Key, error) {
	return m.finished(limit, func(it inbox.Item) bool { return it.EraseWhenFinished }), nil
}

// finished returns up to limit events DONE or IGNORED whose payload is
// kept and that match.
func (m *Memory) finished(limit int, match func(inbox.Item) bool) []webhook.Key {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []webhook.Key
	for k, it := range m.items {
		if (it.Status == inbox.Done || it.Status == inbox.Ignored) && it.PayloadRemoved == "" && match(it) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys[:min(len(keys), limit)]
}

// RecordErasure implements inbox.Store.
func (m *Memory) RecordErasure(_ context.Context, e inbox.Erasure) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.At = e.At.UTC()
	if m.personal.erasures == nil {
		m.personal.erasures = map[string]inbox.Erasure{}
	}
	m.personal.erasures[sortable(e.At)+"#"+e.SubjectHash] = e
	return nil
}

// Erasures implements inbox.Store.
func (m *Memory) Erasures(context.Context) ([]inbox.Erasure, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedValues(m.personal.erasures), nil
}

// ErasureProgress implements inbox.Store.
func (m *Memory) ErasureProgress(_ context.Context, key webhook.Key) (inbox.Progress, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.personal.progress[key], nil
}

// SaveErasureProgress implements inbox.Store.
func (m *Memory) SaveErasureProgress(_ context.Context, key webhook.Key, p inbox.Progress) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.personal.progress == nil {
		m.personal.progress = map[webhook.Key]inbox.Progress{}
	}
	p.Started = p.Started.UTC()
	m.personal.progress[key] = p
	return nil
}

// RecordDataRequest implements inbox.Store.
func (m *Memory) RecordDataRequest(_ context.Context, r inbox.DataRequest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r.At = r.At.UTC()
	if m.personal.dataRequests == nil {
		m.personal.dataRequests = map[string]inbox.DataRequest{}
	}
	m.personal.dataRequests[sortable(r.At)+"#"+r.By] = r
	return nil
}

// DataRequests implements inbox.Store.
func (m *Memory) DataRequests(context.Context) ([]inbox.DataRequest, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedValues(m.personal.dataRequests), nil
}

// sortable returns t as text that sorts as the time does.
func sortable(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// sortedValues returns m's values in the order of their keys.
func sortedValues[V any](m map[string]V) []V {
	var out []V
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
