// Package inboxtest is the conformance suite every inbox.Store must pass,
// and the in-memory store (Memory) unit tests use.
// It runs on the in-memory fake and on DynamoDB (dynalite), so the fake
// used by fast unit tests cannot drift from the real store.
package inboxtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// t0 is the suite's clock origin; every time is an offset from it.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)

// check holds a store to one guarantee; it gets an empty store.
type check struct {
	name string
	run  func(t *testing.T, s inbox.Store)
}

// Run runs the suite. newStore returns an empty store for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) inbox.Store) {
	runTimes(t, newStore)
	for _, c := range checks() {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
	for _, ev := range []webhook.Event{Event("evt_inline"), kibEvent("evt_inline")} {
		t.Run(fmt.Sprintf("InlinePayloadTravelsWithTheItem/%dB", len(ev.Raw)), func(t *testing.T) {
			inlinePayloadTravelsWithTheItem(t, newStore(t), ev)
		})
	}
	for _, ev := range []webhook.Event{Event("evt_rm_inline"), LargeEvent("evt_rm_item"), HugeEvent("evt_rm_s3")} {
		t.Run("RemovePayloadKeepsTheDedupeRecord/"+ev.ID, func(t *testing.T) {
			removePayloadKeepsTheDedupeRecord(t, newStore(t), ev)
		})
	}
	for _, tc := range []struct {
		name string
		to   inbox.Status // where the event is when the erasure comes; "" RECEIVED
		live bool         // under a live lease
	}{
		{"received", "", false},
		{"processing under a live lease", inbox.Processing, true},
		{"processing, lease ended", inbox.Processing, false},
		{"failed", inbox.Failed, false},
		{"parked", inbox.Dead, false},
	} {
		t.Run("ErasureWaitsForAnUnfinishedEvent/"+tc.name, func(t *testing.T) {
			erasureWaitsForAnUnfinishedEvent(t, newStore(t), tc.to, tc.live)
		})
	}
}

// checks are the suite's checks that need one store each, by concern:
// claims, payloads, leases, what the reconciler and replay use, personal
// data.
func checks() []check {
	return []check{
		{"ClaimWritesReceivedItem", claimWritesReceivedItem},
		{"DuplicateClaimReturnsStoredItem", duplicateClaimReturnsStoredItem},
		{"IDOnlyClaimRenewsOnlyFinished", iDOnlyClaimRenewsOnlyFinished},
		{"EndHoldLetsTheNextIDOnlyClaimThrough", endHoldLetsTheNextIDOnlyClaimThrough},
		{"IDOnlyClaimHeldOffUntilRenewAfter", iDOnlyClaimHeldOffUntilRenewAfter},
		{"ConcurrentClaimsOneWins", concurrentClaimsOneWins},
		{"ClaimRefusesSubjectsThatAreNotHashes", claimRefusesSubjectsThatAreNotHashes},

		{"PayloadStoredOnce", payloadStoredOnce},
		{"PayloadWithoutClaimAndClaimWithoutPayload", payloadWithoutClaimAndClaimWithoutPayload},
		{"LargePayloadKeepsItsOwnItem", largePayloadKeepsItsOwnItem},
		{"HugePayloadIsKeptAsAnObjectTheClaimNames", hugePayloadIsKeptAsAnObjectTheClaimNames},
		{"HugeBodyFetchedAgainIsKeptUnderItsOwnHash", hugeBodyFetchedAgainIsKeptUnderItsOwnHash},

		{"LeaseLifecycle", leaseLifecycle},
		{"FailedAndDeadAreLeasedAgain", failedAndDeadAreLeasedAgain},
		{"InfrastructureFailuresAreCountedApart", infrastructureFailuresAreCountedApart},
		{"UncountedAttemptIsTakenBack", uncountedAttemptIsTakenBack},
		{"IgnoredIsNotLeasedAgain", ignoredIsNotLeasedAgain},
		{"ConcurrentLeasesOneWins", concurrentLeasesOneWins},
		{"RefusedLeasesSayWhy", refusedLeasesSayWhy},

		{"MarkEnqueuedOncePerGrace", markEnqueuedOncePerGrace},
		{"RequeueKeepsTheReasonAndStartsTheCountsAfresh", requeueKeepsTheReasonAndStartsTheCountsAfresh},
		{"PendingListsUnfinishedOlderThanCutoff", pendingListsUnfinishedOlderThanCutoff},
		{"PendingShardListsOneShardOldestFirst", pendingShardListsOneShardOldestFirst},

		{"SubjectEventsFindsClaimsThenTheIndex", subjectEventsFindsClaimsThenTheIndex},
		{"AboutFindsClaimsThenTheIndex", aboutFindsClaimsThenTheIndex},
		{"ErasureProgressIsKept", erasureProgressIsKept},
		{"DataRequestsAreRecorded", dataRequestsAreRecorded},
		{"RetainedListsFinishedPayloadsUntilRemoved", retainedListsFinishedPayloadsUntilRemoved},
		{"ErasuresAreRecorded", erasuresAreRecorded},
	}
}

// claim claims the event id at t0.
func claim(t *testing.T, s inbox.Store, id string) inbox.Item {
	t.Helper()
	it, err := s.Claim(context.Background(), inbox.Claim{Event: Event(id), At: t0, TTL: inbox.DefaultTTL})
	if err != nil {
		t.Fatalf("Claim(%s): %v", id, err)
	}
	return it
}

// lease leases key for owner at at, for a minute.
func lease(t *testing.T, s inbox.Store, key webhook.Key, owner string, at time.Time) inbox.Item {
	t.Helper()
	it, err := s.Lease(context.Background(), key, owner, at, time.Minute)
	if err != nil {
		t.Fatalf("Lease(%s, %s): %v", key, owner, err)
	}
	return it
}

// store stores ev as the intake does: the claim, and the payload beside
// it when it does not ride inline.
func store(t *testing.T, s inbox.Store, ev webhook.Event, at time.Time) inbox.Item {
	t.Helper()
	ctx := context.Background()
	c := inbox.Claim{Event: ev, At: at, TTL: inbox.DefaultTTL}.Prepared()
	it, err := s.Claim(ctx, c)
	if err != nil {
		t.Fatalf("Claim(%s): %v", ev.ID, err)
	}
	if !c.Inline() {
		if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
			t.Fatalf("PutPayload(%s): %v", ev.ID, err)
		}
	}
	return it
}

// finish leases key as w1 and finishes it with st at at.
func finish(t *testing.T, s inbox.Store, key webhook.Key, st inbox.Status, at time.Time) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Lease(ctx, key, "w1", at, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(ctx, key, "w1", inbox.Result{Status: st, Outcome: "x", Error: "boom", At: at}); err != nil {
		t.Fatal(err)
	}
}
