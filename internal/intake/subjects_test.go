package intake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestNewEventIsIndexedBeforeItIsSent: a new event is indexed under its
// subjects' hashes before its message goes; a duplicate asks for no
// hashes; an index that cannot be written releases the claim and sends
// nothing, so no event is stored that an erasure cannot find.
func TestNewEventIsIndexedBeforeItIsSent(t *testing.T) {
	backends(t, func(t *testing.T, s inbox.Store, q *recorder) {
		ctx := context.Background()
		asked := 0
		fail := false
		subjects := func(context.Context, webhook.Event) ([]string, error) {
			asked++
			if fail {
				return nil, errors.New("no key")
			}
			return []string{"hash-a", "hash-b"}, nil
		}
		in := intake.New(intake.Config{Now: func() time.Time { return now }, Subjects: subjects}, s, q, nil)
		ev := inboxtest.Event("evt_indexed")
		for _, want := range []intake.Outcome{intake.Accepted, intake.Duplicate} {
			if got, err := in.Accept(ctx, ev); err != nil || got != want {
				t.Fatalf("Accept = %v, %v; want %v", got, err, want)
			}
		}
		if asked != 1 {
			t.Errorf("subjects asked %d times, want once (not for the duplicate)", asked)
		}
		got, err := s.SubjectEvents(ctx, []string{"hash-b"})
		if diff := cmp.Diff([]webhook.Key{ev.Key()}, got); diff != "" || err != nil {
			t.Errorf("SubjectEvents (-want +got):\n%s%v", diff, err)
		}
		fail = true
		other := inboxtest.Event("evt_unindexed")
		if _, err := in.Accept(ctx, other); err == nil {
			t.Fatal("Accept with a failing index: no error")
		}
		if _, err := s.Get(ctx, other.Key()); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("claim after a failed index: %v, want released", err)
		}
		if len(q.sent) != 1 {
			t.Errorf("sent %d messages, want 1 (the indexed event's)", len(q.sent))
		}
	})
}
