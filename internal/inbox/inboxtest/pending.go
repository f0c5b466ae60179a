package inboxtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

func markEnqueuedOncePerGrace(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	it := claim(t, s, "evt_mark")
	grace := 2 * time.Minute
	now := t0.Add(time.Minute)
	if _, err := s.MarkEnqueued(ctx, it.Key, now.Add(-grace), now); !errors.Is(err, inbox.ErrNotDue) {
		t.Errorf("within grace: err = %v, want ErrNotDue", err)
	}
	now = t0.Add(3 * time.Minute)
	got, err := s.MarkEnqueued(ctx, it.Key, now.Add(-grace), now)
	if err != nil {
		t.Fatalf("after grace: %v", err)
	}
	if !got.EnqueuedAt.Equal(now.Truncate(time.Millisecond)) {
		t.Errorf("EnqueuedAt = %v, want %v", got.EnqueuedAt, now)
	}
	if _, err := s.MarkEnqueued(ctx, it.Key, now.Add(-grace), now); !errors.Is(err, inbox.ErrNotDue) {
		t.Errorf("second mark in the same grace period: err = %v, want ErrNotDue", err)
	}
	if _, err := s.MarkEnqueued(ctx, "stripe#evt_none", now, now); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("missing item: err = %v, want ErrNotFound", err)
	}
	lease(t, s, it.Key, "w1", now)
	later := now.Add(time.Hour)
	if _, err := s.MarkEnqueued(ctx, it.Key, later, later); !errors.Is(err, inbox.ErrNotDue) {
		t.Errorf("PROCESSING item: err = %v, want ErrNotDue", err)
	}
	if _, err := s.MarkEnqueued(ctx, it.Key, later, later, inbox.Processing); err != nil {
		t.Errorf("PROCESSING item with Processing allowed: %v", err)
	}
}

func requeueKeepsTheReasonAndStartsTheCountsAfresh(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	it := claim(t, s, "evt_rq")
	for i := range 3 {
		owner := fmt.Sprintf("w%d", i)
		lease(t, s, it.Key, owner, t0.Add(time.Duration(i)*time.Second))
		if _, err := s.Finish(ctx, it.Key, owner, inbox.Result{Status: inbox.Failed, Error: "throttled", At: t0.Add(time.Duration(i) * time.Second), Infrastructure: true}); err != nil {
			t.Fatal(err)
		}
	}
	lease(t, s, it.Key, "w1", t0.Add(time.Minute))
	if _, err := s.Requeue(ctx, it.Key, t0.Add(time.Minute+time.Second)); !errors.Is(err, inbox.ErrLeaseHeld) {
		t.Errorf("Requeue under live lease: err = %v, want ErrLeaseHeld", err)
	}
	if _, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Dead, Error: "mapping gap", At: t0.Add(time.Minute + time.Second), Infrastructure: true}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Requeue(ctx, it.Key, t0.Add(time.Hour))
	if err != nil {
		t.Fatalf("Requeue of DEAD: %v", err)
	}
	if got.Status != inbox.Failed || got.Attempts != 0 || got.InfraFailures != 0 || got.LastError != "mapping gap" || !got.ProcessedAt.IsZero() {
		t.Errorf("after Requeue: %+v; want FAILED, counts afresh, the reason kept", got)
	}
	if got := lease(t, s, it.Key, "w2", t0.Add(time.Hour)); got.Attempts != 1 || got.InfraFailures != 0 {
		t.Errorf("lease after Requeue: attempts %d infra_failures %d, want 1 and 0", got.Attempts, got.InfraFailures)
	}
	if _, err := s.Finish(ctx, it.Key, "w2", inbox.Result{Status: inbox.Done, At: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Requeue(ctx, it.Key, t0.Add(2*time.Hour)); !errors.Is(err, inbox.ErrFinished) {
		t.Errorf("Requeue of DONE: err = %v, want ErrFinished", err)
	}
	if _, err := s.Requeue(ctx, "stripe#evt_none", t0); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Requeue of missing: err = %v, want ErrNotFound", err)
	}
}

func pendingListsUnfinishedOlderThanCutoff(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	for i, id := range []string{"evt_p1", "evt_p2", "evt_p3", "evt_p4"} {
		at := t0.Add(time.Duration(i) * time.Minute)
		if _, err := s.Claim(ctx, inbox.Claim{Event: Event(id), At: at, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	// evt_p2 finishes; evt_p4 is newer than the cutoff.
	lease(t, s, "stripe#evt_p2", "w", t0.Add(time.Minute))
	if _, err := s.Finish(ctx, "stripe#evt_p2", "w", inbox.Result{Status: inbox.Done, At: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Pending(ctx, t0.Add(3*time.Minute), 0)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	var keys []webhook.Key
	for _, it := range got {
		keys = append(keys, it.Key)
	}
	want := []webhook.Key{"stripe#evt_p1", "stripe#evt_p3"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("Pending keys (-want +got):\n%s", diff)
	}
	got, err = s.Pending(ctx, t0.Add(3*time.Minute), 1)
	if err != nil || len(got) != 1 {
		t.Errorf("Pending with limit 1: %d items, err %v", len(got), err)
	}
}

func pendingShardListsOneShardOldestFirst(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	want := map[int][]webhook.Key{}
	for i := 0; i < 24; i++ {
		ev := Event(fmt.Sprintf("evt_shard%02d", i))
		// Later ids are claimed earlier, so oldest first is not id order.
		if _, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0.Add(-time.Duration(i) * time.Second), TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		shard := inbox.ShardOf(ev.Key())
		want[shard] = append([]webhook.Key{ev.Key()}, want[shard]...)
	}
	total := 0
	for shard := 0; shard < inbox.PendingShards; shard++ {
		got, err := s.PendingShard(ctx, shard, t0.Add(time.Minute), 0)
		if err != nil {
			t.Fatalf("PendingShard(%d): %v", shard, err)
		}
		var keys []webhook.Key
		for _, it := range got {
			keys = append(keys, it.Key)
		}
		if diff := cmp.Diff(want[shard], keys); diff != "" {
			t.Errorf("shard %d (-want +got):\n%s", shard, diff)
		}
		total += len(keys)
		if len(want[shard]) > 1 {
			got, err := s.PendingShard(ctx, shard, t0.Add(time.Minute), 1)
			if err != nil || len(got) != 1 || got[0].Key != want[shard][0] {
				t.Errorf("shard %d with limit 1: %+v, %v; want its oldest", shard, got, err)
			}
		}
	}
	if total != 24 {
		t.Errorf("%d events over all shards, want 24", total)
	}
	if _, err := s.PendingShard(ctx, inbox.PendingShards, t0, 0); err == nil {
		t.Error("PendingShard of a shard out of range: no error")
	}
}
