// Package privacy finds, lists and erases what the inbox keeps about a
// person (a subject: a provider's customer id or an email address).
//
// The inbox indexes each event under a keyed hash of each of its subjects
// (HMAC-SHA256 under the subject key, a Secrets Manager secret), so the
// index holds no subject in clear. The key may rotate: new entries use the
// first key, and look-ups try every key listed, so an old key stays listed
// until the events indexed under it have expired.
//
// An erasure removes every stored copy of the subject's payloads and the
// results of their finished effects, keeps each event's dedupe record, and
// leaves an audit record with the subject's hash, never the subject. It is
// safe to run again: what is gone stays gone, and the rest is removed.
package privacy

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// ErrNoKey: no subject key is configured.
var ErrNoKey = errors.New("privacy: no subject key (SUBJECT_KEY or SUBJECT_KEY_ARN)")

// keySource returns the subject keys, newest first (a
// *secrets.Rotating, or Keys).
type keySource interface {
	Values(ctx context.Context) ([]string, error)
}

// Keys is a fixed list of subject keys, newest first.
type Keys []string

// Values implements the key source.
func (k Keys) Values(context.Context) ([]string, error) { return k, nil }

// Hasher turns subjects into the hashes the inbox indexes.
type Hasher struct {
	keys keySource
}

// NewHasher returns the hasher of the keys keys gives.
func NewHasher(keys keySource) Hasher { return Hasher{keys: keys} }

// Index returns the hashes an event about subjects is indexed under: each
// subject under the newest key.
func (h Hasher) Index(ctx context.Context, subjects []provider.Subject) ([]string, error) {
	keys, err := h.values(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(subjects))
	for i, s := range subjects {
		out[i] = mac(keys[0], s)
	}
	return out, nil
}

// Lookup returns every hash subjects may be indexed under: each subject
// under every key.
func (h Hasher) Lookup(ctx context.Context, subjects []provider.Subject) ([]string, error) {
	keys, err := h.values(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range subjects {
		for _, k := range keys {
			out = append(out, mac(k, s))
		}
	}
	return out, nil
}

func (h Hasher) values(ctx context.Context) ([]string, error) {
	if h.keys == nil {
		return nil, ErrNoKey
	}
	keys, err := h.keys.Values(ctx)
	if err != nil {
		return nil, fmt.Errorf("subject key: %w", err)
	}
	if len(keys) == 0 || keys[0] == "" {
		return nil, ErrNoKey
	}
	return keys, nil
}

// mac is the hex HMAC-SHA256 of s under key.
func mac(key string, s provider.Subject) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil))
}

// store lists the inbox calls of an erasure or export.
type store interface {
	SubjectEvents(ctx context.Context, hashes []string) ([]webhook.Key, error)
	ProviderEvents(ctx context.Context, provider string) ([]webhook.Key, error)
	Footprint(ctx context.Context, key webhook.Key) (inbox.Footprint, error)
	RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (inbox.Footprint, error)
	RecordErasure(ctx context.Context, e inbox.Erasure) error
}

// Eraser erases and exports subjects' data in the inbox.
type Eraser struct {
	store  store
	hasher Hasher
	now    func() time.Time
	queues []EventQueue
}

// NewEraser returns an Eraser on a ready store; now nil is time.Now.
func NewEraser(s store, h Hasher, now func() time.Time) *Eraser {
	if now == nil {
		now = time.Now
	}
	return &Eraser{store: s, hasher: h, now: now}
}

// Request is one erasure.
type Request struct {
	Subjects []provider.Subject
	By       string // who asked, for the audit record: "cli:<user>", "shopify customers/redact <key>"
	DryRun   bool   // report what would be removed; remove and record nothing
	// Provider, when set, adds every event of that provider (Shopify's
	// shop/redact).
	Provider string
	// Last is erased after every other event and after the audit record
	// (the compliance event that asked): an erasure cut short is run
	// again with the request's own payload.
	Last webhook.Key
	// KeepLast keeps Last's payload: the business or a destination has
	// yet to finish with the request, and its retry erases it.
	KeepLast bool
}

// Report is what an erasure removed, or an export found.
type Report struct {
	SubjectHash string        `json:"subject_hash"` // the subjects' hashes under the newest key, comma-separated
	Events      []EventReport `json:"events"`
	Copies      int           `json:"copies"` // stored copies of personal data (removed by an erasure)
	Queued      int           `json:"queued"` // whole events in a queue that name the subject (deleted by an erasure)
}

// EventReport is one event of a Report.
type EventReport struct {
	Key        webhook.Key  `json:"key"`
	Provider   string       `json:"provider"`
	Type       string       `json:"type"`
	Status     inbox.Status `json:"status"`
	ReceivedAt time.Time    `json:"received_at"`
	ExpiresAt  time.Time    `json:"expires_at"`
	Where      []string     `json:"where,omitempty"`   // where its personal data is (was) stored
	Removed    string       `json:"removed,omitempty"` // why its payload is gone already: erased, expired
}

func eventReport(f inbox.Footprint) EventReport {
	it := f.Item
	return EventReport{Key: it.Key, Provider: it.Provider, Type: it.EventType, Status: it.Status,
		ReceivedAt: it.ReceivedAt, ExpiresAt: it.ExpiresAt, Where: f.Where(), Removed: it.PayloadRemoved}
}

// Export lists what the inbox keeps about subjects: each event, its type,
// dates and where its personal data is stored.
func (e *Eraser) Export(ctx context.Context, subjects []provider.Subject) (Report, error) {
	r, keys, err := e.find(ctx, subjects)
	if err != nil {
		return Report{}, err
	}
	for _, key := range keys {
		f, err := e.store.Footprint(ctx, key)
		if errors.Is(err, inbox.ErrNotFound) {
			continue // expired, or released
		}
		if err != nil {
			return Report{}, fmt.Errorf("export: %w", err)
		}
		r.Events = append(r.Events, eventReport(f))
		r.Copies += f.Copies()
	}
	return r, nil
}

// Erase removes every stored copy of the subjects' payloads and their
// effects' results, keeping each event's dedupe record, and records the
// erasure (unless DryRun).
func (e *Eraser) Erase(ctx context.Context, req Request) (Report, error) {
	if req.DryRun {
		r, err := e.Export(ctx, req.Subjects)
		if err != nil {
			return r, err
		}
		r.Queued, err = e.sweepAll(ctx, req.Subjects, true)
		return r, err
	}
	r, keys, err := e.find(ctx, req.Subjects)
	if err != nil {
		return Report{}, err
	}
	if req.Provider != "" {
		all, err := e.store.ProviderEvents(ctx, req.Provider)
		if err != nil {
			return Report{}, fmt.Errorf("erase: %w", err)
		}
		keys = append(keys, all...)
	}
	if req.Last != "" {
		keys = append(keys, req.Last) // the request names its subject, indexed or not
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	at := e.now()
	var last *inbox.Footprint
	for _, key := range keys {
		if key == req.Last {
			f, err := e.store.Footprint(ctx, key)
			if err == nil {
				last = &f
			}
			continue
		}
		f, err := e.store.RemovePayload(ctx, key, inbox.RemovedErased, at)
		if errors.Is(err, inbox.ErrNotFound) {
			continue
		}
		if err != nil {
			return r, fmt.Errorf("erase: %w", err)
		}
		r.Events = append(r.Events, eventReport(f))
		r.Copies += f.Copies()
	}
	if last != nil {
		r.Events = append(r.Events, eventReport(*last))
		r.Copies += last.Copies()
	}
	if r.Queued, err = e.sweepAll(ctx, req.Subjects, false); err != nil {
		return r, fmt.Errorf("erase: %w", err)
	}
	audit := inbox.Erasure{At: at, By: req.By, SubjectHash: r.SubjectHash, Events: len(r.Events), Copies: r.Copies, Queued: r.Queued}
	if err := e.store.RecordErasure(ctx, audit); err != nil {
		return r, fmt.Errorf("erase: %w", err)
	}
	if last != nil && !req.KeepLast {
		if _, err := e.store.RemovePayload(ctx, req.Last, inbox.RemovedErased, at); err != nil {
			return r, fmt.Errorf("erase: %w", err)
		}
	}
	return r, nil
}

// find returns the report's subject hash and the subjects' events.
func (e *Eraser) find(ctx context.Context, subjects []provider.Subject) (Report, []webhook.Key, error) {
	if len(subjects) == 0 {
		return Report{}, nil, errors.New("privacy: no subject")
	}
	own, err := e.hasher.Index(ctx, subjects)
	if err != nil {
		return Report{}, nil, err
	}
	all, err := e.hasher.Lookup(ctx, subjects)
	if err != nil {
		return Report{}, nil, err
	}
	keys, err := e.store.SubjectEvents(ctx, all)
	if err != nil {
		return Report{}, nil, fmt.Errorf("find the subject's events: %w", err)
	}
	return Report{SubjectHash: strings.Join(own, ",")}, keys, nil
}
