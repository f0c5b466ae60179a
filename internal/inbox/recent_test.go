package inbox_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/webhook"
)

// recentStore returns a store on a fresh table of dynalite, and a time
// an hour ago at the table's precision.
func recentStore(t *testing.T) (*inbox.DynamoDB, context.Context, time.Time) {
	t.Helper()
	emu := devstacktest.ForTest(t)
	s := inbox.NewDynamoDB(emu.DynamoDB(), devstacktest.NewTestStack(t).Tables["InboxTable"])
	return s, context.Background(), time.Now().Add(-time.Hour).Truncate(time.Millisecond)
}

// TestRecentListsBothIndexesNewestFirst checks Recent on dynalite: the
// unfinished events (pending index) and the finished ones (retain
// index, read back without their payload) merged newest first, paged
// with Before, filtered by provider and window; a DEAD event, in
// neither index, is not listed.
func TestRecentListsBothIndexesNewestFirst(t *testing.T) {
	s, ctx, t0 := recentStore(t)
	claim := func(provider, id string, at time.Time) webhook.Key {
		t.Helper()
		ev := webhook.Event{Provider: provider, ID: id, Type: "t." + id, Raw: []byte(`{"secret":"payload"}`)}
		c := inbox.Claim{Event: ev, At: at, TTL: time.Hour}
		if _, err := s.Claim(ctx, c.Prepared()); err != nil {
			t.Fatal(err)
		}
		return ev.Key()
	}
	finish := func(key webhook.Key, status inbox.Status, at time.Time) {
		t.Helper()
		if _, err := s.Lease(ctx, key, "w", at, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Finish(ctx, key, "w", inbox.Result{Status: status, Outcome: "ok", At: at}); err != nil {
			t.Fatal(err)
		}
	}
	a := claim("stripe", "a", t0)                       // unfinished, active at t0
	b := claim("stripe", "b", t0.Add(time.Second))      // DONE at t0+5s
	c := claim("github", "c", t0.Add(2*time.Second))    // unfinished, active at t0+2s
	d := claim("stripe", "d", t0.Add(3*time.Second))    // IGNORED at t0+4s
	dead := claim("stripe", "e", t0.Add(3*time.Second)) // DEAD: in no index
	finish(b, inbox.Done, t0.Add(5*time.Second))
	finish(d, inbox.Ignored, t0.Add(4*time.Second))
	finish(dead, inbox.Dead, t0.Add(6*time.Second))

	keys := func(q inbox.RecentQuery) ([]webhook.Key, bool) {
		t.Helper()
		items, more, err := s.Recent(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []webhook.Key
		for _, it := range items {
			if it.Payload != nil {
				t.Errorf("%s: listed with its payload", it.Key)
			}
			out = append(out, it.Key)
		}
		return out, more
	}
	both := inbox.RecentQuery{Unfinished: true, Finished: true}
	tests := []struct {
		name     string
		q        inbox.RecentQuery
		want     []webhook.Key
		wantMore bool
	}{
		{"all", both, []webhook.Key{b, d, c, a}, false},
		{"first page", inbox.RecentQuery{Unfinished: true, Finished: true, Limit: 2}, []webhook.Key{b, d}, true},
		{"next page", inbox.RecentQuery{Unfinished: true, Finished: true, Limit: 2, Before: t0.Add(4 * time.Second)}, []webhook.Key{c, a}, false},
		{"unfinished", inbox.RecentQuery{Unfinished: true}, []webhook.Key{c, a}, false},
		{"finished", inbox.RecentQuery{Finished: true}, []webhook.Key{b, d}, false},
		{"provider", inbox.RecentQuery{Unfinished: true, Finished: true, Provider: "github"}, []webhook.Key{c}, false},
		{"window", inbox.RecentQuery{Unfinished: true, Finished: true, Since: t0.Add(2 * time.Second), Before: t0.Add(5 * time.Second)}, []webhook.Key{d, c}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, more := keys(tt.q)
			if diff := cmp.Diff(tt.want, got); diff != "" || more != tt.wantMore {
				t.Errorf("more %v, want %v; keys (-want +got):\n%s", more, tt.wantMore, diff)
			}
		})
	}
	items, _, err := s.Recent(ctx, inbox.RecentQuery{Finished: true})
	if err != nil || len(items) != 2 {
		t.Fatalf("finished: %v, %v", items, err)
	}
	if got := items[1]; got.Status != inbox.Ignored || got.EventType != "t.d" || got.Outcome != "ok" || !got.ProcessedAt.Equal(t0.Add(4*time.Second)) {
		t.Errorf("the IGNORED event read back as %+v", got)
	}
}

// TestRecentPagesThroughEventsOfOneMillisecond: events claimed, or
// finished, in the same millisecond (a burst) straddle a page's end; the
// next page, after the last event's time and key, lists each of the
// rest, none twice.
func TestRecentPagesThroughEventsOfOneMillisecond(t *testing.T) {
	s, ctx, t0 := recentStore(t)
	var want []webhook.Key
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		ev := webhook.Event{Provider: "stripe", ID: "evt_burst_" + id, Type: "t", Raw: []byte(`{}`)}
		c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}
		if _, err := s.Claim(ctx, c.Prepared()); err != nil {
			t.Fatal(err)
		}
		if id == "d" || id == "e" { // finished, in one millisecond too
			if _, err := s.Lease(ctx, ev.Key(), "w", t0, time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Finish(ctx, ev.Key(), "w", inbox.Result{Status: inbox.Done, At: t0.Add(time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, ev.Key())
	}
	slices.Reverse(want) // finished later first, then the greatest key first
	var got []webhook.Key
	q := inbox.RecentQuery{Unfinished: true, Finished: true, Limit: 2}
	for range 5 {
		items, more, err := s.Recent(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			got = append(got, it.Key)
		}
		if !more || len(items) == 0 {
			break
		}
		last := items[len(items)-1]
		q.Before, q.BeforeKey = inbox.LastActive(last), last.Key
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events listed page by page (-want +got):\n%s", diff)
	}
}

// TestRecentPagesWithinASecond: finished events of one shard, one on the
// second and later ones within it, are read from the retain index newest
// first, so a page of two lists the newest two and the next page the
// rest.
func TestRecentPagesWithinASecond(t *testing.T) {
	s, ctx, _ := recentStore(t)
	second := time.Now().Add(-time.Hour).Truncate(time.Second)
	var want []webhook.Key
	for i, n := 0, 0; len(want) < 3; i++ {
		key := webhook.NewKey("stripe", fmt.Sprintf("evt_second_%d", i))
		if inbox.ShardOf(key) != 0 {
			continue // one shard: its Query alone orders them
		}
		at := second.Add(time.Duration(n) * 450 * time.Millisecond) // "…:00Z", "…:00.45Z", "…:00.9Z"
		n++
		ev := webhook.Event{Provider: "stripe", ID: key.EventID(), Type: "t", Raw: []byte(`{}`)}
		if _, err := s.Claim(ctx, inbox.Claim{Event: ev, At: second.Add(-time.Minute), TTL: time.Hour}.Prepared()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lease(ctx, key, "w", at, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Finish(ctx, key, "w", inbox.Result{Status: inbox.Done, At: at}); err != nil {
			t.Fatal(err)
		}
		want = append([]webhook.Key{key}, want...)
	}
	var got []webhook.Key
	q := inbox.RecentQuery{Finished: true, Limit: 2}
	for range 3 {
		items, _, err := s.Recent(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			break
		}
		for _, it := range items {
			got = append(got, it.Key)
		}
		last := items[len(items)-1]
		q.Before, q.BeforeKey = inbox.LastActive(last), last.Key
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events listed two a page (-want +got):\n%s", diff)
	}
}

// TestRecentListsTimesAnEarlierVersionWrote: finished events whose
// processed_at an earlier version wrote (RFC 3339, its trailing zeros
// cut: "…:05Z", "…:05.12Z") beside ones written now, in one second and
// one shard, are each listed once, page after page, whatever the
// page's bound within that second.
func TestRecentListsTimesAnEarlierVersionWrote(t *testing.T) {
	emu := devstacktest.ForTest(t)
	table := devstacktest.NewTestStack(t).Tables["InboxTable"]
	s, ctx := inbox.NewDynamoDB(emu.DynamoDB(), table), context.Background()
	second := time.Now().Add(-time.Hour).Truncate(time.Second)
	// the old ones written as an earlier version did; 5.123 on its own
	at := []time.Duration{0, 120 * time.Millisecond, 123 * time.Millisecond, 500 * time.Millisecond, 700 * time.Millisecond}
	old := map[int]bool{0: true, 1: true, 3: true}
	var want []webhook.Key
	for i, n := 0, 0; n < len(at); i++ {
		key := webhook.NewKey("stripe", fmt.Sprintf("evt_old_%d", i))
		if inbox.ShardOf(key) != 0 {
			continue
		}
		ev := webhook.Event{Provider: "stripe", ID: key.EventID(), Type: "t", Raw: []byte(`{}`)}
		done := second.Add(at[n])
		if _, err := s.Claim(ctx, inbox.Claim{Event: ev, At: second.Add(-time.Minute), TTL: time.Hour}.Prepared()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lease(ctx, key, "w", done, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Finish(ctx, key, "w", inbox.Result{Status: inbox.Done, At: done}); err != nil {
			t.Fatal(err)
		}
		if old[n] {
			_, err := emu.DynamoDB().UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(table), Key: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: string(key)}, "sk": &types.AttributeValueMemberS{Value: inbox.SortEvent}},
				UpdateExpression: aws.String("SET processed_at = :at"), ConditionExpression: aws.String("attribute_exists(pk)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":at": &types.AttributeValueMemberS{Value: done.UTC().Format(time.RFC3339Nano)}},
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		want = append([]webhook.Key{key}, want...)
		n++
	}
	for _, before := range []time.Duration{time.Second, 600 * time.Millisecond, 124 * time.Millisecond, 10 * time.Millisecond} {
		items, _, err := s.Recent(ctx, inbox.RecentQuery{Finished: true, Before: second.Add(before), Since: second.Add(-time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		var got, wantBefore []webhook.Key
		for _, it := range items {
			got = append(got, it.Key)
		}
		for i, key := range want {
			if at[len(at)-1-i] < before {
				wantBefore = append(wantBefore, key)
			}
		}
		if diff := cmp.Diff(wantBefore, got); diff != "" {
			t.Errorf("events before %v into the second (-want +got):\n%s", before, diff)
		}
	}
}
