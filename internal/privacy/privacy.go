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
// leaves an audit record with the subject's hash, never the subject. An
// event not finished yet keeps its payload until it is (it runs once
// more), then loses it. It is safe to run again: what is gone stays gone,
// and the rest is removed; an erasure asked for by an event goes on where
// it stopped, a page at a time, within its invocation's deadline.
package privacy

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

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
	SubjectEvents(ctx context.Context, hashes []string, cursor string, limit int) ([]webhook.Key, string, error)
	About(ctx context.Context, key webhook.Key, hashes []string) (bool, error)
	Footprint(ctx context.Context, key webhook.Key) (inbox.Footprint, error)
	RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (inbox.Footprint, error)
	RecordErasure(ctx context.Context, e inbox.Erasure) error
	ErasureProgress(ctx context.Context, key webhook.Key) (inbox.Progress, error)
	SaveErasureProgress(ctx context.Context, key webhook.Key, p inbox.Progress) error
	RecordDataRequest(ctx context.Context, r inbox.DataRequest) error
}

// ErrMore: the erasure stopped before its deadline with events left; it
// kept its progress, and running it again goes on where it stopped.
var ErrMore = errors.New("privacy: erasure not finished in this invocation; run it again to go on")

// Eraser erases and exports subjects' data in the inbox. Safe for
// concurrent use.
type Eraser struct {
	store  store
	hasher Hasher
	now    func() time.Time
	queues []EventQueue
	page   int // events listed and erased at a time
	// late reports whether a page that may take as long as slowest is
	// not to be started: too near ctx's deadline.
	late func(ctx context.Context, slowest time.Duration) bool
}

// How an erasure paces itself: pageSize events are listed at a time and
// erased pageWorkers at once; a call with a deadline (the processor's: a
// shop's erasure takes several invocations) starts no page within
// deadlineMargin, and twice its slowest page so far, of it.
const (
	pageSize       = 100
	pageWorkers    = 10
	deadlineMargin = 5 * time.Second
)

// NewEraser returns an Eraser on a ready store; now nil is time.Now.
func NewEraser(s store, h Hasher, now func() time.Time) *Eraser {
	if now == nil {
		now = time.Now
	}
	return &Eraser{store: s, hasher: h, now: now, page: pageSize, late: nearDeadline}
}

// Request is one erasure.
type Request struct {
	Subjects []provider.Subject
	By       string // who asked, for the audit record: "cli:<user>", "shopify customers/redact <key>"
	DryRun   bool   // report what would be removed; remove and record nothing
	// ID, when set, is the event that asked (a compliance webhook). The
	// erasure then keeps its progress beside it and stops with ErrMore
	// when ctx's deadline nears; run again with the same ID, it goes on
	// where it stopped and does nothing twice. The event's own payload is
	// erased too, once it finishes.
	ID webhook.Key
	// Within bounds the erasure to one account of a provider (the shop
	// a compliance webhook comes from); the zero Within bounds nothing.
	Within Within
}

// Within bounds a request to one account of a provider
// (provider.PrivacyRequest.Account): of Provider's events, only those
// about Account are erased or listed; other providers' events are found
// by the request's subjects alone. The zero Within bounds nothing.
type Within struct {
	Provider string
	Account  provider.Subject
}

// scope decides, for a request bounded by w, whether an event it found
// is the request's to erase or list.
type scope func(ctx context.Context, key webhook.Key) (bool, error)

// scope returns w's decision: the account's hashes under every key are
// looked up once, each event of w's provider is asked about them
// (Store.About).
func (e *Eraser) scope(ctx context.Context, w Within) (scope, error) {
	if w.Account == "" {
		return func(context.Context, webhook.Key) (bool, error) { return true, nil }, nil
	}
	hashes, err := e.hasher.Lookup(ctx, []provider.Subject{w.Account})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key webhook.Key) (bool, error) {
		if key.Provider() != w.Provider {
			return true, nil
		}
		in, err := e.store.About(ctx, key, hashes)
		if err != nil {
			return false, fmt.Errorf("is %s of %s: %w", key, w.Provider, err)
		}
		return in, nil
	}, nil
}

// Report is what an erasure removed, or an export found.
type Report struct {
	SubjectHash string        `json:"subject_hash"` // the subjects' hashes under the newest key, comma-separated
	Events      []EventReport `json:"events"`
	More        int           `json:"more,omitempty"` // events found but not listed in Events (a long data request, an erasure's earlier runs)
	Copies      int           `json:"copies"`         // stored copies of personal data (those an erasure removed)
	Waiting     int           `json:"waiting"`        // events not finished: erased once they are
	Queued      int           `json:"queued"`         // whole events in a queue that name the subject (an erasure takes them into the inbox)
	// Truncated: the listing stopped before it had found every event (a
	// data request's bound); hookinbox export lists them all.
	Truncated bool `json:"truncated,omitempty"`
}

// Found returns how many events r found.
func (r Report) Found() int { return len(r.Events) + r.More }

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
	// Waiting: an erasure waits for the event to finish (it is waiting,
	// running, failed or parked): its payload stays until then.
	Waiting bool `json:"waiting,omitempty"`
}

func eventReport(f inbox.Footprint) EventReport {
	it := f.Item
	return EventReport{Key: it.Key, Provider: it.Provider, Type: it.EventType, Status: it.Status,
		ReceivedAt: it.ReceivedAt, ExpiresAt: it.ExpiresAt, Where: f.Where(), Removed: it.PayloadRemoved,
		Waiting: it.EraseWhenFinished}
}

// add lists f in r, and counts its copies.
func (r *Report) add(f inbox.Footprint) {
	r.Events = append(r.Events, eventReport(f))
	r.Copies += f.Copies()
	if f.Item.EraseWhenFinished {
		r.Waiting++
	}
}

// Export lists what the inbox keeps about subjects: each event, its type,
// dates and where its personal data is stored.
func (e *Eraser) Export(ctx context.Context, subjects []provider.Subject) (Report, error) {
	return e.export(ctx, subjects, Within{}, 0)
}

// export lists what is kept about subjects within w. With a limit (a data
// request, which an invocation answers) it lists at most limit events,
// and stops sooner when ctx's deadline nears: the report is Truncated.
func (e *Eraser) export(ctx context.Context, subjects []provider.Subject, w Within, limit int) (Report, error) {
	r, lookup, err := e.hashes(ctx, subjects)
	if err != nil {
		return Report{}, err
	}
	ours, err := e.scope(ctx, w)
	if err != nil {
		return Report{}, err
	}
	seen := map[webhook.Key]bool{}
	var slowest time.Duration
	for cursor, more := "", true; more; more = cursor != "" {
		if limit > 0 && e.late(ctx, slowest) {
			r.Truncated = true
			return r, nil
		}
		start := time.Now()
		var keys []webhook.Key
		keys, cursor, err = e.store.SubjectEvents(ctx, lookup, cursor, e.page)
		if err != nil {
			return Report{}, fmt.Errorf("export: %w", err)
		}
		for _, key := range keys {
			if seen[key] {
				continue
			}
			if limit > 0 && len(r.Events) >= limit {
				r.Truncated = true
				return r, nil
			}
			seen[key] = true
			f, ok, err := e.footprint(ctx, key, ours)
			if err != nil {
				return Report{}, fmt.Errorf("export: %w", err)
			}
			if ok {
				r.add(f)
			}
		}
		slowest = max(slowest, time.Since(start))
	}
	return r, nil
}

// footprint returns what is kept of the event key an export found; ok is
// false for another account's event (ours says), and for one that expired
// or was released since.
func (e *Eraser) footprint(ctx context.Context, key webhook.Key, ours scope) (f inbox.Footprint, ok bool, err error) {
	if in, err := ours(ctx, key); err != nil || !in {
		return f, false, err
	}
	f, err = e.store.Footprint(ctx, key)
	if errors.Is(err, inbox.ErrNotFound) {
		return f, false, nil
	}
	return f, err == nil, err
}

// A data request's record lists at most maxRecorded events, in at most
// maxRecordBytes of JSON, well within DynamoDB's 400 KB item: a listing
// that stopped there is Truncated, and `hookinbox export` lists the rest.
const (
	maxRecorded    = 1000
	maxRecordBytes = 300 << 10
)

// AnswerDataRequest lists what the inbox keeps about subjects within w,
// as Export does but bounded (maxRecorded, ctx's deadline), and records
// the listing (inbox.DataRequest) under by (who asked) and reference
// (the provider's name for the request), at now, so that `hookinbox
// export --requests` shows it.
func (e *Eraser) AnswerDataRequest(ctx context.Context, subjects []provider.Subject, w Within, by, reference string) (Report, error) {
	r, err := e.export(ctx, subjects, w, maxRecorded)
	if err != nil {
		return r, err
	}
	listing, err := json.Marshal(r)
	for err == nil && len(listing) > maxRecordBytes {
		// Too long for the record: the last events go (they are
		// counted), a share of them a pass.
		keep := len(r.Events) * maxRecordBytes / len(listing) * 9 / 10
		r.More += len(r.Events) - keep
		r.Events, r.Truncated = r.Events[:keep], true
		listing, err = json.Marshal(r)
	}
	if err != nil {
		return r, fmt.Errorf("data request: %w", err)
	}
	rec := inbox.DataRequest{At: e.now(), By: by, Reference: reference, SubjectHash: r.SubjectHash, Report: listing}
	if err := e.store.RecordDataRequest(ctx, rec); err != nil {
		return r, fmt.Errorf("data request: %w", err)
	}
	return r, nil
}

// Erase removes every stored copy of the subjects' payloads and their
// effects' results, keeping each event's dedupe record, and records the
// erasure (unless DryRun, or it found no one and no event asked). An event that is not finished keeps its
// payload until it is (it runs once more): it is marked, and counted in
// Report.Waiting. With req.ID it is resumable (see Request.ID).
func (e *Eraser) Erase(ctx context.Context, req Request) (Report, error) {
	if req.DryRun {
		return e.dryRun(ctx, req)
	}
	run, err := e.begin(ctx, req)
	switch {
	case run == nil:
		return Report{}, err
	case err == nil && !run.p.Done:
		err = run.eraseListed(ctx)
		if err == nil {
			err = run.finish(ctx)
		}
	}
	return withProgress(run.r, run.p, req.ID), err
}

// dryRun reports what Erase would remove, and the events queues hold
// that name the subjects, removing nothing.
func (e *Eraser) dryRun(ctx context.Context, req Request) (Report, error) {
	r, err := e.export(ctx, req.Subjects, req.Within, 0)
	if err != nil {
		return r, err
	}
	r.Queued, err = e.sweepAll(ctx, req.Subjects, nil)
	return r, err
}

// erasure is one run of Erase: its request, what it looks for, and what
// it found and did so far.
type erasure struct {
	*Eraser
	req    Request
	lookup []string // every hash the subjects may be indexed under
	ours   scope
	seen   map[webhook.Key]bool
	r      Report         // the events this run found
	p      inbox.Progress // what the erasure did, in every run
}

// begin starts the erasure req asks for, or resumes it from its progress.
func (e *Eraser) begin(ctx context.Context, req Request) (*erasure, error) {
	r, lookup, err := e.hashes(ctx, req.Subjects)
	if err != nil {
		return nil, err
	}
	ours, err := e.scope(ctx, req.Within)
	if err != nil {
		return nil, err
	}
	run := &erasure{Eraser: e, req: req, lookup: lookup, ours: ours, seen: map[webhook.Key]bool{}, r: r}
	run.p, err = e.progress(ctx, req.ID)
	return run, err
}

// eraseListed erases the events the index lists, a page at a time,
// keeping the progress after each; with an ID it stops with ErrMore when
// ctx's deadline nears.
func (run *erasure) eraseListed(ctx context.Context) error {
	var slowest time.Duration
	for !run.p.Listed {
		if run.req.ID != "" && run.late(ctx, slowest) {
			return ErrMore
		}
		start := time.Now()
		keys, next, err := run.store.SubjectEvents(ctx, run.lookup, run.p.Cursor, run.page)
		if err == nil {
			err = run.eraseKeys(ctx, keys, run.ours)
		}
		if err != nil {
			// The page is done again next time; what was erased is
			// counted now, and not again.
			return run.stopped(ctx, run.req.ID, run.p, err)
		}
		slowest = max(slowest, time.Since(start))
		run.p.Cursor, run.p.Listed = next, next == ""
		if err := run.save(ctx, run.req.ID, run.p); err != nil {
			return err
		}
	}
	return nil
}

// finish erases the request's own event and the events queues hold, then
// records the erasure, unless it found no one and no event asked.
func (run *erasure) finish(ctx context.Context) error {
	if run.req.ID != "" {
		// The request names its subjects, indexed or not: its own payload
		// goes too, once it has finished.
		if err := run.eraseKeys(ctx, []webhook.Key{run.req.ID}, nil); err != nil {
			return run.stopped(ctx, run.req.ID, run.p, err)
		}
	}
	// The events a queue holds have not run: each is claimed and marked
	// before its message goes.
	n, err := run.sweepAll(ctx, run.req.Subjects, func(ctx context.Context, key webhook.Key) error {
		return run.eraseKeys(ctx, []webhook.Key{key}, nil)
	})
	run.p.Queued += n
	if err != nil {
		return fmt.Errorf("erase: %w", err)
	}
	if run.req.ID == "" && len(run.r.Events)+run.p.Queued == 0 {
		return nil // no one found: nothing done, nothing to audit
	}
	p := run.p
	audit := inbox.Erasure{At: p.Started, By: run.req.By, SubjectHash: run.r.SubjectHash, Events: p.Events, Copies: p.Copies, Waiting: p.Waiting, Queued: p.Queued}
	if err := run.store.RecordErasure(ctx, audit); err != nil {
		return fmt.Errorf("erase: %w", err)
	}
	run.p.Done = true
	return run.save(ctx, run.req.ID, run.p)
}

// eraseKeys erases the events of keys not seen yet that are ours (nil:
// all of them), pageWorkers at a time, and counts them.
func (run *erasure) eraseKeys(ctx context.Context, keys []webhook.Key, ours scope) error {
	keys = slices.DeleteFunc(slices.Clone(keys), func(k webhook.Key) bool { return run.seen[k] })
	slices.Sort(keys)
	keys = slices.Compact(keys)
	found := make([]*inbox.Footprint, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pageWorkers)
	for i, key := range keys {
		g.Go(func() error {
			f, err := run.eraseOne(gctx, key, ours)
			found[i] = f
			return err
		})
	}
	err := g.Wait() // what was done is counted, failed or not
	for i, f := range found {
		run.seen[keys[i]] = true
		if f != nil {
			run.count(*f)
		}
	}
	return err
}

// eraseOne erases the event key when it is ours (nil: any), and returns
// what it kept; nil when it is another account's, expired or released.
func (run *erasure) eraseOne(ctx context.Context, key webhook.Key, ours scope) (*inbox.Footprint, error) {
	if ours != nil {
		if in, err := ours(ctx, key); err != nil || !in {
			return nil, err // another account's: left alone
		}
	}
	f, err := run.store.RemovePayload(ctx, key, inbox.RemovedErased, run.p.Started)
	if errors.Is(err, inbox.ErrNotFound) {
		return nil, nil // expired, or released
	}
	if err != nil {
		return nil, fmt.Errorf("erase: %w", err)
	}
	return &f, nil
}

// count lists f, an event erased or marked, in the run's report and its
// progress.
func (run *erasure) count(f inbox.Footprint) {
	run.r.add(f)
	switch {
	case f.Marked:
		run.p.Events++
		run.p.Waiting++
	case !f.Item.EraseWhenFinished && f.Copies() > 0:
		run.p.Events++
		run.p.Copies += f.Copies()
	}
}

// withProgress returns r, which lists the events this run found, with
// the counts of what the erasure did (p): the copies it removed and the
// queued events it deleted; for a resumed erasure (id set), the events
// it erased or marked to erase in every run, and those that wait.
func withProgress(r Report, p inbox.Progress, id webhook.Key) Report {
	r.Copies, r.Queued = p.Copies, p.Queued
	if id != "" {
		r.More = max(0, p.Events-len(r.Events))
		r.Waiting = p.Waiting
	}
	return r
}

// progress returns the progress of the erasure id asked for: a fresh one
// when there is none (or no id).
func (e *Eraser) progress(ctx context.Context, id webhook.Key) (inbox.Progress, error) {
	var p inbox.Progress
	if id != "" {
		var err error
		if p, err = e.store.ErasureProgress(ctx, id); err != nil {
			return p, fmt.Errorf("erase: %w", err)
		}
	}
	if p.Started.IsZero() {
		p.Started = e.now()
	}
	return p, nil
}

// save keeps p as the progress of the erasure id asked for (none without
// an id).
func (e *Eraser) save(ctx context.Context, id webhook.Key, p inbox.Progress) error {
	if id == "" {
		return nil
	}
	if err := e.store.SaveErasureProgress(ctx, id, p); err != nil {
		return fmt.Errorf("erase: %w", err)
	}
	return nil
}

// stopped saves p, the progress of the erasure id asked for, after a
// page failed with err, and returns err; ErrMore when the page ran out
// of time (ctx is done): the erasure goes on at the next attempt.
func (e *Eraser) stopped(ctx context.Context, id webhook.Key, p inbox.Progress, err error) error {
	if id == "" {
		return fmt.Errorf("erase: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	serr := e.save(sctx, id, p)
	if ctx.Err() != nil && serr == nil {
		return fmt.Errorf("%w (%v)", ErrMore, err)
	}
	return errors.Join(fmt.Errorf("erase: %w", err), serr)
}

// nearDeadline reports whether ctx's deadline is within deadlineMargin
// and twice the slowest page so far.
func nearDeadline(ctx context.Context, slowest time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) < deadlineMargin+2*slowest
}

// hashes returns a report naming the subjects' hashes under the newest
// key, and every hash they may be indexed under.
func (e *Eraser) hashes(ctx context.Context, subjects []provider.Subject) (Report, []string, error) {
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
	return Report{SubjectHash: strings.Join(own, ",")}, all, nil
}
