package processor_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/smithy-go"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestErasureWaitsForTheEventToFinish: an erasure that names an event
// not finished yet (claimed, parked, or running under a live lease) does
// not take its payload: the event runs once more, its business effects
// happen, it ends DONE, and then its payload is erased.
func TestErasureWaitsForTheEventToFinish(t *testing.T) {
	for _, when := range []string{"claimed", "parked", "running"} {
		t.Run(when, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			msg := f.claim(t, "evt_wait", "checkout.session.completed")
			key := webhook.NewKey("stripe", "evt_wait")
			if when == "parked" {
				if _, err := f.store.Lease(ctx, key, "w0", f.now(), 0); err != nil {
					t.Fatal(err)
				}
				if _, err := f.store.Finish(ctx, key, "w0", inbox.Result{Status: inbox.Dead, At: f.now()}); err != nil {
					t.Fatal(err)
				}
			}
			erase := func() {
				t.Helper()
				if fp, err := f.store.RemovePayload(ctx, key, inbox.RemovedErased, f.now()); err != nil || !fp.Item.EraseWhenFinished {
					t.Fatalf("erasure of the %s event: %+v, %v; want it marked", when, fp, err)
				}
				if _, err := f.store.Payload(ctx, key); err != nil {
					t.Fatalf("payload of the %s event after the erasure: %v; want it kept", when, err)
				}
			}
			var resp events.SQSEventResponse
			if when == "running" {
				finish := f.holdLease(msg)
				erase()
				resp = finish()
			} else {
				erase()
				var err error
				if resp, err = f.h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}}); err != nil {
					t.Fatal(err)
				}
			}
			if len(resp.BatchItemFailures) != 0 {
				t.Fatalf("Handle = %+v; want acknowledged", resp)
			}
			if runs := f.biz.Runs(); len(runs) != 2 {
				t.Errorf("the business's effects: %v; want both run", runs)
			}
			if it := f.status(t, "evt_wait"); it.Status != inbox.Done || it.PayloadRemoved != inbox.RemovedErased || it.EraseWhenFinished {
				t.Errorf("after the attempt: %s, payload %q, marked %v; want DONE, erased", it.Status, it.PayloadRemoved, it.EraseWhenFinished)
			}
			if _, err := f.store.Payload(ctx, key); !errors.Is(err, inbox.ErrNotFound) {
				t.Errorf("payload after the attempt: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestErasedEventEndsIgnored: an event finished, then erased, that a
// person sends back (a replay of an IGNORED event) ends IGNORED with the
// reason, and the business never runs.
func TestErasedEventEndsIgnored(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	msg := f.claim(t, "evt_erased", "checkout.session.completed")
	key := webhook.NewKey("stripe", "evt_erased")
	if _, err := f.store.Lease(ctx, key, "w0", f.now(), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Finish(ctx, key, "w0", inbox.Result{Status: inbox.Ignored, At: f.now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.RemovePayload(ctx, key, inbox.RemovedErased, f.now()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Requeue(ctx, key, f.now()); err != nil {
		t.Fatal(err)
	}
	resp, err := f.h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle = %+v, %v; want acknowledged", resp, err)
	}
	if it := f.status(t, "evt_erased"); it.Status != inbox.Ignored || !strings.Contains(it.Outcome, "erased") {
		t.Errorf("item %s %q, want IGNORED, erased", it.Status, it.Outcome)
	}
	if runs := f.biz.Runs(); len(runs) != 0 {
		t.Errorf("the business ran: %v", runs)
	}
}

// faultyStore is the in-memory store with faults: each field, when set,
// stands for the method.
type faultyStore struct {
	*inboxtest.Memory
	indexSubjects func(key webhook.Key, hashes []string) error
	removePayload func(key webhook.Key) error
}

func (s faultyStore) IndexSubjects(ctx context.Context, key webhook.Key, hashes []string, exp time.Time) error {
	if s.indexSubjects != nil {
		if err := s.indexSubjects(key, hashes); err != nil {
			return err
		}
	}
	return s.Memory.IndexSubjects(ctx, key, hashes, exp)
}

func (s faultyStore) RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (inbox.Footprint, error) {
	if s.removePayload != nil {
		if err := s.removePayload(key); err != nil {
			return inbox.Footprint{}, err
		}
	}
	return s.Memory.RemovePayload(ctx, key, why, at)
}

// TestAnErasureTheProcessorCouldNotFinishIsTheReconcilers: when removing
// the payload fails after the finish, the event is DONE and listed among
// the finished events to erase, and the retention pass erases it.
func TestAnErasureTheProcessorCouldNotFinishIsTheReconcilers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	store := faultyStore{Memory: f.store, removePayload: func(webhook.Key) error { return errors.New("connection reset") }}
	h := processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }}, store, f.ledger, f.biz, f.q, f.q, nil)
	msg := f.claim(t, "evt_late", "checkout.session.completed")
	key := webhook.NewKey("stripe", "evt_late")
	if _, err := f.store.RemovePayload(ctx, key, inbox.RemovedErased, f.now()); err != nil {
		t.Fatal(err)
	}
	if resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle = %+v, %v; want acknowledged", resp, err)
	}
	if keys, err := f.store.FinishedToErase(ctx, 10); err != nil || !slices.Equal(keys, []webhook.Key{key}) {
		t.Fatalf("FinishedToErase = %v, %v; want %s", keys, err, key)
	}
	n, err := privacy.Retention{Store: f.store, Keep: privacy.DefaultRetention}.Run(ctx, f.now())
	if err != nil || n != 1 {
		t.Fatalf("retention = %d, %v; want 1 payload removed", n, err)
	}
	if it := f.status(t, "evt_late"); it.Status != inbox.Done || it.PayloadRemoved != inbox.RemovedErased {
		t.Errorf("after the retention: %s, payload %q; want DONE, erased", it.Status, it.PayloadRemoved)
	}
}

// TestClaimSubjectsAreIndexedBeforeAnythingRuns: the subjects a claim
// carries are indexed before the business runs, and dropped from the
// claim by the finish. While they cannot be indexed, the business never
// runs and the event is never parked, whatever its receives and the
// failures' kind: it stays unfinished, where an erasure finds it by its
// claim.
func TestClaimSubjectsAreIndexedBeforeAnythingRuns(t *testing.T) {
	subjects := []string{inboxtest.Hash("customer"), inboxtest.Hash("email")}
	slices.Sort(subjects)
	for _, fault := range []error{nil, errors.New("AccessDeniedException"),
		&smithy.OperationError{ServiceID: "DynamoDB", OperationName: "BatchWriteItem", Err: context.DeadlineExceeded}} {
		name := "indexed"
		if fault != nil {
			name = fault.Error()
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			var indexed [][]string
			store := faultyStore{Memory: f.store, indexSubjects: func(_ webhook.Key, hashes []string) error {
				if runs := f.biz.Runs(); len(runs) != 0 {
					t.Errorf("indexed after the business ran: %v", runs)
				}
				indexed = append(indexed, hashes)
				return fault
			}}
			h := processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }, MaxInfraFailures: 2}, store, f.ledger, f.biz, f.q, f.q, slog.New(slog.DiscardHandler))
			ev := webhook.Event{Provider: "stripe", ID: "evt_subjects", Type: "checkout.session.completed", Created: t0, Raw: []byte(`{"id":"evt_subjects"}`)}
			if _, err := f.store.Claim(ctx, inbox.Claim{Event: ev, At: f.now(), TTL: time.Hour, Subjects: subjects}); err != nil {
				t.Fatal(err)
			}
			body := queue.Envelope{Key: ev.Key(), Type: ev.Type}.Marshal()
			for receives := 1; receives <= 8; receives++ {
				f.clock = f.clock.Add(time.Hour) // past every backoff
				if _, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{message(ev.ID, body, receives)}}); err != nil {
					t.Fatal(err)
				}
				if fault == nil {
					break
				}
			}
			it := f.status(t, ev.ID)
			if fault == nil {
				if len(indexed) != 1 || !slices.Equal(indexed[0], subjects) || it.Status != inbox.Done || it.Subjects != nil {
					t.Errorf("indexed %v; item %s, subjects %v; want the claim's subjects indexed once, DONE, dropped", indexed, it.Status, it.Subjects)
				}
				return
			}
			if it.Status.Final() || !slices.Equal(it.Subjects, subjects) || len(f.q.parked) != 0 {
				t.Errorf("after %d attempts: %s, subjects %v, %d parked; want unfinished, its subjects on the claim, nothing parked", len(indexed), it.Status, it.Subjects, len(f.q.parked))
			}
			if runs := f.biz.Runs(); len(runs) != 0 {
				t.Errorf("the business ran: %v", runs)
			}
		})
	}
}
