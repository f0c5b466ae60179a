package intake_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestSubjectsRideOnTheClaim: a new event's subject hashes ride on its
// claim, so its ack path writes no index entry (the processor writes
// them) and an erasure finds it while it waits; a duplicate changes
// nothing; hashes that cannot be made (no key) refuse the delivery before
// anything is written or sent, so no event is stored that an erasure
// cannot find.
func TestSubjectsRideOnTheClaim(t *testing.T) {
	backends(t, func(t *testing.T, s inbox.Store, q *recorder) {
		ctx := context.Background()
		fail := false
		want := []string{inboxtest.Hash("b"), inboxtest.Hash("a")} // sorted, as the claim keeps them
		subjects := func(context.Context, webhook.Event) ([]string, error) {
			if fail {
				return nil, errors.New("no key")
			}
			return want, nil
		}
		in := intake.New(intake.Config{Now: func() time.Time { return now }, Subjects: subjects}, noIndex{s}, q, nil)
		ev := inboxtest.Event("evt_subjects")
		for _, outcome := range []intake.Outcome{intake.Accepted, intake.Duplicate} {
			if got, err := in.Accept(ctx, ev); err != nil || got != outcome {
				t.Fatalf("Accept = %v, %v; want %v", got, err, outcome)
			}
		}
		it, err := s.Get(ctx, ev.Key())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, it.Subjects); diff != "" {
			t.Errorf("the claim's subjects (-want +got):\n%s", diff)
		}
		var found []webhook.Key
		for cursor, more := "", true; more; more = cursor != "" {
			var keys []webhook.Key
			if keys, cursor, err = s.SubjectEvents(ctx, want[1:], cursor, 100); err != nil {
				t.Fatal(err)
			}
			found = append(found, keys...)
		}
		if diff := cmp.Diff([]webhook.Key{ev.Key()}, found); diff != "" {
			t.Errorf("events found by a subject before the processor ran (-want +got):\n%s", diff)
		}
		fail = true
		other := inboxtest.Event("evt_no_subjects")
		if _, err := in.Accept(ctx, other); err == nil {
			t.Fatal("Accept without its subjects' hashes: no error")
		}
		if _, err := s.Get(ctx, other.Key()); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("claim without its subjects: %v, want none made", err)
		}
		if len(q.sent) != 1 {
			t.Errorf("sent %d messages, want 1", len(q.sent))
		}
	})
}

// noIndex is a store whose IndexSubjects fails the test: the intake
// never writes index entries.
type noIndex struct{ inbox.Store }

func (noIndex) IndexSubjects(context.Context, webhook.Key, []string, time.Time) error {
	panic("the intake wrote subject index entries")
}

// TestABodyNamingThousandsIsStillClaimed: an event whose body names
// 5,000 people (a signed body anyone can fill with addresses) is claimed,
// indexed under the first inbox.MaxSubjects, not refused by the item
// limit.
func TestABodyNamingThousandsIsStillClaimed(t *testing.T) {
	backends(t, func(t *testing.T, s inbox.Store, q *recorder) {
		ctx := context.Background()
		var many []string
		for i := range 5000 {
			many = append(many, inboxtest.Hash(strconv.Itoa(i)))
		}
		subjects := func(context.Context, webhook.Event) ([]string, error) { return many, nil }
		in := intake.New(intake.Config{Now: func() time.Time { return now }, Subjects: subjects}, s, q, nil)
		ev := inboxtest.Event("evt_many")
		if got, err := in.Accept(ctx, ev); err != nil || got != intake.Accepted {
			t.Fatalf("Accept = %v, %v; want accepted", got, err)
		}
		if it, err := s.Get(ctx, ev.Key()); err != nil || len(it.Subjects) != inbox.MaxSubjects {
			t.Errorf("claim: %d subjects, %v; want %d", len(it.Subjects), err, inbox.MaxSubjects)
		}
	})
}
