package inboxtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

func leaseLifecycle(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	it := claim(t, s, "evt_lease")
	got := lease(t, s, it.Key, "w1", t0)
	if got.Status != inbox.Processing || got.LeaseOwner != "w1" || got.Attempts != 1 || got.TakenFrom != "" {
		t.Errorf("after Lease: status %s owner %q attempts %d; want PROCESSING w1 1", got.Status, got.LeaseOwner, got.Attempts)
	}
	if !got.LeaseUntil.Equal(t0.Add(time.Minute).Truncate(time.Millisecond)) {
		t.Errorf("LeaseUntil = %v, want %v", got.LeaseUntil, t0.Add(time.Minute))
	}
	if _, err := s.Lease(ctx, it.Key, "w2", t0.Add(time.Second), time.Minute); !errors.Is(err, inbox.ErrLeaseHeld) {
		t.Errorf("Lease while held: err = %v, want ErrLeaseHeld", err)
	}
	// The lease is abandoned: w2 takes it over after lease_until.
	got = lease(t, s, it.Key, "w2", t0.Add(2*time.Minute))
	if got.LeaseOwner != "w2" || got.Attempts != 2 || got.TakenFrom != "w1" {
		t.Errorf("takeover: owner %q attempts %d taken from %q; want w2 2 w1", got.LeaseOwner, got.Attempts, got.TakenFrom)
	}
	if _, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Done, At: t0}); !errors.Is(err, inbox.ErrLeaseLost) {
		t.Errorf("Finish by the old owner: err = %v, want ErrLeaseLost", err)
	}
	done, err := s.Finish(ctx, it.Key, "w2", inbox.Result{Status: inbox.Done, Outcome: "3 effects", At: t0.Add(3 * time.Minute)})
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if done.Status != inbox.Done || done.Outcome != "3 effects" || done.LeaseOwner != "" || !done.ProcessedAt.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("after Finish: %+v", done)
	}
	if _, err := s.Lease(ctx, it.Key, "w3", t0.Add(time.Hour), time.Minute); !errors.Is(err, inbox.ErrFinished) {
		t.Errorf("Lease of DONE: err = %v, want ErrFinished", err)
	}
	if _, err := s.Lease(ctx, "stripe#evt_nope", "w1", t0, time.Minute); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Lease of missing: err = %v, want ErrNotFound", err)
	}
}

func failedAndDeadAreLeasedAgain(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	it := claim(t, s, "evt_fail")
	lease(t, s, it.Key, "w1", t0)
	got, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Failed, Error: "ses: throttled", At: t0.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != inbox.Failed || got.LastError != "ses: throttled" {
		t.Errorf("after FAILED: status %s last_error %q", got.Status, got.LastError)
	}
	if got := lease(t, s, it.Key, "w2", t0.Add(2*time.Second)); got.TakenFrom != "" {
		t.Errorf("lease after FAILED taken from %q; a finished attempt leaves no lease to take over", got.TakenFrom)
	}
	got, err = s.Finish(ctx, it.Key, "w2", inbox.Result{Status: inbox.Dead, Error: "unknown price", At: t0.Add(3 * time.Second), Infrastructure: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != inbox.Dead || got.LastError != "unknown price" || got.Attempts != 2 || got.InfraFailures != 1 {
		t.Errorf("after DEAD: %+v", got)
	}
	if pending, err := s.Pending(ctx, t0.Add(time.Hour), 0); err != nil || len(pending) != 0 {
		t.Errorf("Pending with only a DEAD event: %d items, err %v; want none", len(pending), err)
	}
	// A message for a DEAD event is a redrive from the DLQ: a person
	// sent it back, so it is leased again, keeping its last error, its
	// failure counts started afresh (this lease is attempt 1).
	got = lease(t, s, it.Key, "w3", t0.Add(time.Hour))
	if got.Status != inbox.Processing || got.Attempts != 1 || got.InfraFailures != 0 || got.LastError != "unknown price" ||
		got.Outcome != "" || !got.ProcessedAt.IsZero() || got.LeaseOwner != "w3" {
		t.Errorf("Lease of DEAD: %+v", got)
	}
	if _, err := s.Lease(ctx, it.Key, "w9", t0.Add(time.Hour+time.Second), time.Minute); !errors.Is(err, inbox.ErrLeaseHeld) {
		t.Errorf("second Lease of a redriven DEAD event: err = %v, want ErrLeaseHeld", err)
	}
	// Leased again, it is unfinished: the pending index has it back.
	pending, err := s.Pending(ctx, t0.Add(2*time.Hour), 0)
	if err != nil || len(pending) != 1 || pending[0].Key != it.Key {
		t.Errorf("Pending after the DEAD event was leased again: %+v, err %v; want it", pending, err)
	}
	if _, err := s.Finish(ctx, it.Key, "w3", inbox.Result{Status: inbox.Done, At: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lease(ctx, it.Key, "w4", t0.Add(2*time.Hour), time.Minute); !errors.Is(err, inbox.ErrFinished) {
		t.Errorf("Lease of DONE after a redrive: err = %v, want ErrFinished", err)
	}
}

func infrastructureFailuresAreCountedApart(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	it := claim(t, s, "evt_infra")
	for i, infra := range []bool{true, false, true} {
		owner := fmt.Sprintf("w%d", i)
		at := t0.Add(time.Duration(i) * time.Minute)
		lease(t, s, it.Key, owner, at)
		if _, err := s.Finish(ctx, it.Key, owner, inbox.Result{Status: inbox.Failed, Error: "timeout", At: at.Add(time.Second), Infrastructure: infra}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, it.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Attempts != 3 || got.InfraFailures != 2 || got.Status != inbox.Failed {
		t.Errorf("after 3 failed attempts, 2 of the infrastructure: attempts %d, infra_failures %d, status %s; want 3, 2, FAILED",
			got.Attempts, got.InfraFailures, got.Status)
	}
	// A lease keeps the count.
	if got := lease(t, s, it.Key, "w9", t0.Add(time.Hour)); got.InfraFailures != 2 {
		t.Errorf("lease: infra_failures %d, want 2", got.InfraFailures)
	}
}

func uncountedAttemptIsTakenBack(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	it := claim(t, s, "evt_busy")
	for i, uncounted := range []bool{false, true, true} {
		owner := fmt.Sprintf("w%d", i)
		at := t0.Add(time.Duration(i) * time.Minute)
		lease(t, s, it.Key, owner, at)
		if _, err := s.Finish(ctx, it.Key, owner, inbox.Result{Status: inbox.Failed, Error: "busy", At: at.Add(time.Second), Uncounted: uncounted}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, it.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Attempts != 1 || got.InfraFailures != 0 {
		t.Errorf("after 3 attempts, 2 uncounted: attempts %d, infra_failures %d; want 1, 0", got.Attempts, got.InfraFailures)
	}
}

func ignoredIsNotLeasedAgain(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	it := claim(t, s, "evt_ign")
	lease(t, s, it.Key, "w1", t0)
	if _, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Ignored, Outcome: "no handler", At: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lease(ctx, it.Key, "w2", t0.Add(time.Hour), time.Minute); !errors.Is(err, inbox.ErrFinished) {
		t.Errorf("Lease of IGNORED: err = %v, want ErrFinished", err)
	}
}

func concurrentLeasesOneWins(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	it := claim(t, s, "evt_lrace")
	const n = 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	var owners []string
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			owner := fmt.Sprintf("w%d", i)
			_, err := s.Lease(ctx, it.Key, owner, t0, time.Minute)
			if err == nil {
				mu.Lock()
				owners = append(owners, owner)
				mu.Unlock()
			} else if !errors.Is(err, inbox.ErrLeaseHeld) {
				t.Errorf("Lease: %v", err)
			}
		}(i)
	}
	wg.Wait()
	if len(owners) != 1 {
		t.Fatalf("leases granted to %v, want exactly one", owners)
	}
	got, err := s.Get(ctx, it.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.LeaseOwner != owners[0] || got.Attempts != 1 {
		t.Errorf("stored owner %q attempts %d; want %q 1", got.LeaseOwner, got.Attempts, owners[0])
	}
}

func refusedLeasesSayWhy(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	// Workers lease one event and finish each attempt FAILED while the
	// others try: a refused lease always wraps why (held, or raced when
	// the event read back could be leased), never nothing.
	it := claim(t, s, "evt_lwhy")
	const workers, rounds = 4, 15
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			owner := fmt.Sprintf("w%d", w)
			for i := range rounds {
				at := t0.Add(time.Duration(i) * time.Millisecond)
				_, err := s.Lease(ctx, it.Key, owner, at, time.Minute)
				switch {
				case err == nil:
					if _, err := s.Finish(ctx, it.Key, owner, inbox.Result{Status: inbox.Failed, Error: "throttled", At: at}); err != nil {
						t.Errorf("Finish: %v", err)
					}
				case !errors.Is(err, inbox.ErrLeaseHeld) && !errors.Is(err, inbox.ErrLeaseRaced), strings.Contains(err.Error(), "%!"):
					t.Errorf("refused Lease: %v; want ErrLeaseHeld or ErrLeaseRaced", err)
				}
			}
		})
	}
	wg.Wait()
}
