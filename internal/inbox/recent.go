package inbox

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/webhook"
)

// RecentQuery says which events Recent lists.
type RecentQuery struct {
	// Since and Before bound the events' last activity (LastActive):
	// at or after Since, before Before; zero Since is no bound, zero
	// Before is now.
	Since, Before time.Time
	// BeforeKey, when set, lists the events last active at Before too
	// whose key comes after it in Latest's order: the page after the
	// event of BeforeKey and Before, even when others share its time.
	BeforeKey webhook.Key
	// Limit is the most events returned, and the most each shard of each
	// index read returns; default 50, at most 1000.
	Limit int
	// Unfinished reads the pending index (RECEIVED, PROCESSING, FAILED),
	// Finished the retain index (DONE or IGNORED, payload still kept).
	Unfinished, Finished bool
	// Provider, when set, lists only that provider's events.
	Provider string
}

// LastActive returns when it last changed as the indexes sort it: when
// it finished, or for an unfinished event when its last message went out.
func LastActive(it Item) time.Time {
	if !it.ProcessedAt.IsZero() {
		return it.ProcessedAt
	}
	return it.EnqueuedAt
}

// Latest orders events as Recent lists them: the most recently active
// first (LastActive), then by key, the greatest first.
func Latest(a, b Item) int {
	if c := LastActive(b).Compare(LastActive(a)); c != 0 {
		return c
	}
	return strings.Compare(string(b.Key), string(a.Key))
}

// Lists reports whether it is in q's window: last active at or after
// Since and before Before, or at Before with a key after BeforeKey in
// Latest's order.
func (q RecentQuery) Lists(it Item) bool {
	at := LastActive(it)
	switch {
	case at.Before(q.Since):
		return false
	case q.Before.IsZero(), at.Before(q.Before):
		return true
	}
	return q.BeforeKey != "" && at.Equal(q.Before) && it.Key < q.BeforeKey
}

// recentAttributes are what Recent reads of a finished event's status
// item: everything but its payload.
const recentAttributes = "pk, sk, #s, provider, event_type, livemode, created, received_at, enqueued_at, payload_sha256, " +
	"expires_at, attempts, infra_failures, last_error, processed_at, outcome, " + attrPayloadObject + ", " + attrPayloadRemoved + ", " + attrRemovedAt

// Recent returns up to q.Limit events, the most recently active first
// (LastActive), for a person looking at the inbox (hookinbox console).
// It never scans the table: it reads each shard of the pending and the
// retain index once, newest first (2 × PendingShards Queries of at most
// q.Limit entries; the retain index's once more for the rest of the
// bound's second, cut), then the status items of the finished events it
// returns with BatchGetItem, without their payloads. A finished event
// whose payload is gone (past PayloadRetention, or erased) and a DEAD
// event are in neither index, so not listed. more reports that older
// events in range were left out: list them with Before set to the last
// event's LastActive and BeforeKey set to its key.
func (s *DynamoDB) Recent(ctx context.Context, q RecentQuery) (items []Item, more bool, err error) {
	q = q.withDefaults()
	finished := map[string]bool{} // listed by the retain index: only the key is known
	for shard := 0; shard < PendingShards; shard++ {
		ins := q.inputs(s.table, shard)
		for i, in := range ins {
			cut := q.Finished && i == len(ins)-1
			page, err := s.db.Query(ctx, in)
			if err != nil {
				return nil, false, fmt.Errorf("recent events, index %s shard %d: %w", aws.ToString(in.IndexName), shard, err)
			}
			// The rest of a second read for the times an earlier version
			// wrote (cut) says nothing of older events.
			more = more || len(page.LastEvaluatedKey) > 0 && !cut
			for _, av := range page.Items {
				if cut && len(getS(av, "processed_at")) >= len(timeLayout) {
					continue // written now: the other Query read it if it is in range
				}
				it, err := unmarshal(av)
				if err != nil {
					return nil, false, err
				}
				if aws.ToString(in.IndexName) == RetainIndex {
					it.ProcessedAt, _ = parseTime(getS(av, "processed_at"))
					finished[string(it.Key)] = true
				}
				if q.Lists(it) {
					items = append(items, it)
				}
			}
		}
	}
	slices.SortStableFunc(items, Latest)
	if len(items) > q.Limit {
		items, more = items[:q.Limit], true
	}
	items, err = s.fillFinished(ctx, items, finished)
	return items, more, err
}

func (q RecentQuery) withDefaults() RecentQuery {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	q.Limit = min(q.Limit, 1000)
	if q.Before.IsZero() {
		q.Before = time.Now()
	}
	return q
}

// inputs returns the Queries of one shard q reads.
func (q RecentQuery) inputs(table string, shard int) []*dynamodb.QueryInput {
	var out []*dynamodb.QueryInput
	// BETWEEN includes both ends: Before is left out, unless events
	// at Before are listed too (BeforeKey; Lists picks them).
	lastMilli, lastNano := q.Before.Add(-time.Millisecond), q.Before.Add(-time.Nanosecond)
	if q.BeforeKey != "" {
		lastMilli, lastNano = q.Before, q.Before
	}
	if q.Unfinished {
		out = append(out, q.input(table, PendingIndex, "pending = :shard AND enqueued_at BETWEEN :since AND :before", shard,
			millis(q.Since), millis(lastMilli), "provider = :p", q.Provider))
	}
	if q.Finished {
		out = append(out, q.input(table, RetainIndex, attrRetain+" = :shard AND processed_at BETWEEN :since AND :before", shard,
			str(formatTime(q.Since)), str(formatTime(lastNano)), "begins_with(pk, :p)", q.Provider+"#"))
		out = append(out, q.cut(table, shard, lastNano))
	}
	return out
}

// cut is the last Query of a shard's finished events: those whose
// processed_at, in the form an earlier version wrote (RFC 3339, its
// trailing zeros cut), sorts after last though the time is not after it
// ("…:05Z" and "…:05.12Z" sort after "…:05.123000000Z"). It reads the
// rest of last's second; Recent keeps the shorter texts only, and Lists
// picks.
func (q RecentQuery) cut(table string, shard int, last time.Time) *dynamodb.QueryInput {
	end := last.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z") // after every form of that second
	return q.input(table, RetainIndex, attrRetain+" = :shard AND processed_at BETWEEN :since AND :before", shard,
		str(formatTime(last)), str(end), "begins_with(pk, :p)", q.Provider+"#")
}

// input is one newest-first Query of a shard of index.
func (q RecentQuery) input(table, index, cond string, shard int, since, before types.AttributeValue, filter, p string) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{
		TableName: aws.String(table), IndexName: aws.String(index),
		KeyConditionExpression: aws.String(cond),
		ExpressionAttributeValues: attrs{
			":shard": str(strconv.Itoa(shard)), ":since": since, ":before": before,
		},
		ScanIndexForward: aws.Bool(false),
		Limit:            aws.Int32(int32(q.Limit)),
	}
	if q.Provider != "" {
		in.FilterExpression = aws.String(filter)
		in.ExpressionAttributeValues[":p"] = str(p)
	}
	return in
}

// fillFinished replaces each event of items the retain index listed
// (finished: only its key is known) with its status item, read without
// its payload by BatchGetItem, 100 keys a call; one deleted since is
// left out.
func (s *DynamoDB) fillFinished(ctx context.Context, items []Item, finished map[string]bool) ([]Item, error) {
	var keys []attrs
	for _, it := range items {
		if finished[string(it.Key)] {
			keys = append(keys, itemKey(it.Key, SortEvent))
		}
	}
	read := map[string]Item{}
	for len(keys) > 0 {
		batch := keys[:min(len(keys), 100)]
		keys = keys[len(batch):]
		got, err := s.batchGet(ctx, batch)
		if err != nil {
			return nil, err
		}
		for _, av := range got {
			it, err := unmarshal(av)
			if err != nil {
				return nil, err
			}
			read[string(it.Key)] = it
		}
	}
	out := items[:0]
	for _, it := range items {
		if finished[string(it.Key)] {
			var ok bool
			if it, ok = read[string(it.Key)]; !ok {
				continue
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// batchGet reads keys with BatchGetItem, again for any left unprocessed.
func (s *DynamoDB) batchGet(ctx context.Context, keys []attrs) ([]attrs, error) {
	var out []attrs
	for try := 0; len(keys) > 0; try++ {
		if try == 5 {
			return out, fmt.Errorf("recent events: %d reads left unprocessed", len(keys))
		}
		time.Sleep(time.Duration(try) * 20 * time.Millisecond) // throttled: back off a little
		page, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{s.table: {
			Keys: keys, ProjectionExpression: aws.String(recentAttributes), ExpressionAttributeNames: map[string]string{"#s": "status"},
		}}})
		if err != nil {
			return out, fmt.Errorf("recent events: %w", err)
		}
		out = append(out, page.Responses[s.table]...)
		keys = page.UnprocessedKeys[s.table].Keys
	}
	return out, nil
}
