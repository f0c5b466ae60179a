package chaos

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/webhook"
)

// fakeTarget answers deliveries from a script and counts what it was sent.
type fakeTarget struct {
	mu        sync.Mutex
	answers   map[webhook.Key][]int // statuses to answer, in order; then 200
	delivered map[webhook.Key]int
	requeued  map[webhook.Key]int
	busyFor   int // Busy reports one message this many times
}

func (f *fakeTarget) Deliver(_ context.Context, ev Event) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delivered[ev.Key()]++
	if a := f.answers[ev.Key()]; len(a) > 0 {
		f.answers[ev.Key()] = a[1:]
		if a[0] == 0 {
			return 0, errors.New("connection reset")
		}
		return a[0], nil
	}
	return 200, nil
}

func (f *fakeTarget) Requeue(_ context.Context, ev Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requeued[ev.Key()]++
	return nil
}

func (f *fakeTarget) Busy(context.Context) (int, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busyFor > 0 {
		f.busyFor--
		return 1, 0, nil
	}
	return 0, 0, nil
}

func (f *fakeTarget) Snapshot(context.Context, []webhook.Key) (Snapshot, error) {
	return Snapshot{}, nil
}

func TestRunDeliversDupTimesRetriesAndCopiesMessages(t *testing.T) {
	evs := []Event{{Provider: "stripe", ID: "evt_a", Type: "x"}, {Provider: "stripe", ID: "evt_b", Type: "x"}, {Provider: "stripe", ID: "evt_c", Type: "x"}}
	f := &fakeTarget{
		answers:   map[webhook.Key][]int{"stripe#evt_a": {500, 0}, "stripe#evt_c": {400, 400, 400}},
		delivered: map[webhook.Key]int{}, requeued: map[webhook.Key]int{}, busyFor: 2,
	}
	st, err := Run(context.Background(), f, evs, Config{Dup: 3, Shuffle: true, Concurrency: 4, QueueDups: true, Seed: 1, DelayJitter: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// evt_a: 500 and no answer are retried (2 more deliveries); evt_c's
	// three 400s are final answers, not retried, and get no queue copy.
	wantDelivered := map[webhook.Key]int{"stripe#evt_a": 5, "stripe#evt_b": 3, "stripe#evt_c": 3}
	wantRequeued := map[webhook.Key]int{"stripe#evt_a": 3, "stripe#evt_b": 3}
	if diff := cmp.Diff(wantDelivered, f.delivered); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantRequeued, f.requeued); diff != "" {
		t.Errorf("queue copies (-want +got):\n%s", diff)
	}
	want := Stats{Events: 3, Deliveries: 11, Accepted: 6, Retried: 2, Refused: map[int]int{400: 3}, QueueCopies: 6}
	if diff := cmp.Diff(want, st, cmp.FilterPath(func(p cmp.Path) bool {
		n := p.Last().String()
		return n == ".ToQuiet" || n == ".Elapsed"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

func TestRunReportsAPipelineThatStaysBusy(t *testing.T) {
	f := &fakeTarget{delivered: map[webhook.Key]int{}, requeued: map[webhook.Key]int{}, busyFor: 1 << 30}
	_, err := Run(context.Background(), f, []Event{{Provider: "stripe", ID: "evt_a", Type: "x"}}, Config{QuietWithin: 300 * time.Millisecond})
	if !errors.Is(err, errNotQuiet) {
		t.Errorf("Run error = %v, want errNotQuiet", err)
	}
}
