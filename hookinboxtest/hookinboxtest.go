// Package hookinboxtest runs hookinbox's pipeline — receiver → SQS events
// queue → processor (→ DLQ) — on the local emulators with your Business,
// so a team's own module can test its effects end to end, with
// duplicates and shuffled order, before it deploys.
//
// New starts (or reuses) dynalite and local-aws-sqs from hookinbox's
// local/ lock file (moto with HOOKINBOX_EMULATORS=moto), creates a fresh
// stack from hookinbox's template.yaml under a unique name, and deletes it
// when the test ends; the emulators need Node.js, and `npm ci` runs in the
// hookinbox module the first time. Tests that share the emulators do not
// see each other's events. With -short, New skips the test. It is part of
// hookinbox's public API (test helpers only: nothing shipped imports it).
package hookinboxtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/stripeevent"
	"github.com/hookinbox/hookinbox/webhook"
)

// Pipeline is one test's hookinbox stack with its business.
type Pipeline struct {
	p *pipelinetest.Pipeline
}

// New builds the pipeline with the processor running the business b
// builds; env is added to the processor's environment (your settings).
// The Stripe signing secret and API key are the pipeline's own, and the
// Stripe API is a local stand-in.
func New(t testing.TB, b processorfn.BusinessBuilder, env map[string]string) *Pipeline {
	t.Helper()
	return &Pipeline{p: pipelinetest.NewWith(t, pipelinetest.Options{Processor: processorfn.Builder(b), ProcessorEnv: env})}
}

// DeliverStripe signs body as Stripe does and hands it to the receiver, as
// API Gateway would, returning its answer: "accepted" or "duplicate". Any
// other answer fails the test.
func (p *Pipeline) DeliverStripe(t testing.TB, body []byte) string {
	t.Helper()
	return p.p.Deliver(t, body)
}

// ProcessUntil runs the processor on the events queue, as Lambda's event
// source would, until done reports true; it fails the test if done does
// not hold within the given time.
func (p *Pipeline) ProcessUntil(t testing.TB, within time.Duration, done func() bool) {
	t.Helper()
	p.p.ProcessUntil(t, within, done)
}

// Status returns the inbox status of the event key: RECEIVED, PROCESSING,
// DONE, FAILED, DEAD or IGNORED, or "" when there is no such event.
func (p *Pipeline) Status(t testing.TB, key webhook.Key) string {
	t.Helper()
	it, err := p.p.Inbox.Get(context.Background(), key)
	if errors.Is(err, inbox.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(it.Status)
}

// AllFinished reports whether every event of keys is DONE, IGNORED or DEAD.
func (p *Pipeline) AllFinished(t testing.TB, keys []webhook.Key) bool {
	t.Helper()
	for _, k := range keys {
		switch p.Status(t, k) {
		case string(inbox.Done), string(inbox.Ignored), string(inbox.Dead):
		default:
			return false
		}
	}
	return true
}

// Effects returns the effect ledger of the event key, sorted by effect name.
func (p *Pipeline) Effects(t testing.TB, key webhook.Key) []effects.Record {
	t.Helper()
	recs, err := effects.NewLedger(p.p.DynamoDB, p.p.Stack.Tables["InboxTable"], 0).Records(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// StripeEvent returns hookinbox's realistic fixture of the Stripe event
// type (testdata/stripe/<type>.json: checkout.session.completed,
// customer.subscription.created, .updated, .deleted, invoice.paid) with
// the event ID id.
func (p *Pipeline) StripeEvent(t testing.TB, typ, id string) []byte {
	t.Helper()
	raw, err := verifytest.StripeFixture(typ)
	if err == nil {
		raw, err = verifytest.PatchStripe(raw, id, time.Time{})
	}
	if err != nil {
		t.Fatalf("hookinboxtest: %v", err)
	}
	return raw
}

// NewStripeEventID returns a fresh ID shaped like Stripe's: evt_ and 24
// letters and digits (stripeevent.NewID).
func NewStripeEventID() string { return stripeevent.NewID() }
