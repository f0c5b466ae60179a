package inbox

import (
	"context"
	"errors"
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

// Personal data. Each event is indexed under the people it is about (its
// subjects), never by the subject itself but by a keyed hash of it: the
// claim carries the hashes (Claim.Subjects), and the processor writes one
// small item per subject and event, partition subjectPrefix+hash, sort key
// the event key, expiring with the event. Erasing a subject, or the
// retention of a finished event's payload, removes every stored copy of the
// payload (inline, payload item, S3 object) and, for an erasure, the
// results of its finished effects; the status item stays, so a provider's
// retry is still a duplicate. An erasure never removes the payload of an
// unfinished event: it marks it, and the payload goes once the event is
// DONE or IGNORED. Each erasure leaves an Erasure record.

// Why a payload was removed (Item.PayloadRemoved).
const (
	RemovedErased  = "erased"  // a subject's erasure
	RemovedExpired = "expired" // the retention of a finished event's payload
)

// Partitions of the personal-data items: a ':' keeps them apart from every
// event key ("<provider>#<id>", and a provider's name has no ':').
const (
	subjectPrefix    = "subject:"
	erasurePartition = "audit:erasure"
)

// RetainIndex is the sparse global secondary index over finished events
// (DONE or IGNORED) whose payload is still kept: partition key "retain"
// (a shard number, or "erase" for an event an erasure waits for; removed
// with the payload), sort key "processed_at".
const RetainIndex = "retain"

// Footprint is what the inbox keeps of one event.
type Footprint struct {
	Item        Item     // the status item, the dedupe record
	Inline      bool     // the payload rides in the status item
	PayloadItem bool     // the payload has an item of its own
	Object      string   // the S3 object of a large payload, or ""
	Effects     []string // the finished effects whose result is stored
	// Marked: RemovePayload marked the unfinished event to erase when it
	// finishes (Item.EraseWhenFinished); it was not before.
	Marked bool
}

// Copies returns how many stored copies of personal data f counts: the
// payload's and each effect result.
func (f Footprint) Copies() int {
	n := len(f.Effects)
	for _, b := range []bool{f.Inline, f.PayloadItem, f.Object != ""} {
		if b {
			n++
		}
	}
	return n
}

// Where returns where f's copies are, for a person: "inline", "payload
// item", "s3://<object>", "effect <name>".
func (f Footprint) Where() []string {
	var out []string
	if f.Inline {
		out = append(out, "inline")
	}
	if f.PayloadItem {
		out = append(out, "payload item")
	}
	if f.Object != "" {
		out = append(out, "s3 "+f.Object)
	}
	for _, e := range f.Effects {
		out = append(out, "effect "+e)
	}
	return out
}

// ErrRemoved: the event's payload was removed (Item.PayloadRemoved), so it
// cannot be run again.
var ErrRemoved = errors.New("inbox: the event's payload was removed")

// IndexSubjects implements Store with BatchWriteItem: one item per hash,
// each one write unit.
func (s *DynamoDB) IndexSubjects(ctx context.Context, key webhook.Key, hashes []string, expiresAt time.Time) error {
	var reqs []types.WriteRequest
	for _, h := range hashes {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: attrs{
			"pk": str(subjectPrefix + h), "sk": str(string(key)), "expires_at": num(expiresAt.Unix()),
		}}})
	}
	for len(reqs) > 0 {
		batch := reqs[:min(len(reqs), 25)]
		reqs = reqs[len(batch):]
		for try := 0; len(batch) > 0; try++ {
			if try == 5 {
				return fmt.Errorf("index subjects of %s: %d writes left unprocessed", key, len(batch))
			}
			time.Sleep(time.Duration(try) * 20 * time.Millisecond) // throttled: back off a little
			out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: batch}})
			if err != nil {
				return fmt.Errorf("index subjects of %s: %w", key, err)
			}
			batch = out.UnprocessedItems[s.table]
		}
	}
	return nil
}

// SubjectEvents implements Store: one Query of a pending shard (then a
// consistent GetItem of each unfinished event's subjects), or of one
// hash's index partition, per call.
func (s *DynamoDB) SubjectEvents(ctx context.Context, hashes []string, cursor string, limit int) ([]webhook.Key, string, error) {
	c, err := parseCursor(cursor, len(hashes))
	if err != nil {
		return nil, "", err
	}
	in := &dynamodb.QueryInput{
		TableName:         aws.String(s.table),
		Limit:             aws.Int32(int32(max(1, min(limit, 1000)))),
		ExclusiveStartKey: c.after,
	}
	if c.source < PendingShards {
		in.IndexName = aws.String(PendingIndex)
		in.KeyConditionExpression = aws.String("pending = :shard")
		in.ExpressionAttributeValues = attrs{":shard": str(strconv.Itoa(c.source))}
	} else {
		in.KeyConditionExpression = aws.String("pk = :pk")
		in.ExpressionAttributeValues = attrs{":pk": str(subjectPrefix + hashes[c.source-PendingShards])}
		in.ConsistentRead = aws.Bool(true)
	}
	page, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, "", fmt.Errorf("subject events: %w", err)
	}
	var keys []webhook.Key
	for _, av := range page.Items {
		if c.source >= PendingShards {
			keys = append(keys, webhook.Key(skOf(av)))
			continue
		}
		key := webhook.Key(getS(av, "pk"))
		names, err := s.claimSubjects(ctx, key)
		if err != nil {
			return nil, "", err
		}
		if slices.ContainsFunc(names, func(h string) bool { return slices.Contains(hashes, h) }) {
			keys = append(keys, key)
		}
	}
	return keys, c.next(page.LastEvaluatedKey, len(hashes)), nil
}

// About implements Store with one consistent GetItem of the claim's
// subjects, then one of each hash's index entry until one is found.
func (s *DynamoDB) About(ctx context.Context, key webhook.Key, hashes []string) (bool, error) {
	names, err := s.claimSubjects(ctx, key)
	if err != nil {
		return false, err
	}
	if slices.ContainsFunc(names, func(h string) bool { return slices.Contains(hashes, h) }) {
		return true, nil
	}
	for _, h := range hashes {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.table), Key: attrs{"pk": str(subjectPrefix + h), "sk": str(string(key))}, ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return false, fmt.Errorf("subjects of %s: %w", key, err)
		}
		if out.Item != nil {
			return true, nil
		}
	}
	return false, nil
}

// claimSubjects returns the subjects the status item of key still
// carries (not yet indexed).
func (s *DynamoDB) claimSubjects(ctx context.Context, key webhook.Key) ([]string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: itemKey(key, SortEvent), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String(attrSubjects),
	})
	if err != nil {
		return nil, fmt.Errorf("subjects of %s: %w", key, err)
	}
	return subjectsOf(out.Item, attrSubjects), nil
}

// partition returns every item of the partition pk, consistently read.
func (s *DynamoDB) partition(ctx context.Context, pk string) ([]attrs, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: attrs{":pk": str(pk)},
		ConsistentRead:            aws.Bool(true),
	}
	var out []attrs
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", pk, err)
		}
		out = append(out, page.Items...)
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// Footprint implements Store with one Query of the event's partition.
func (s *DynamoDB) Footprint(ctx context.Context, key webhook.Key) (Footprint, error) {
	items, err := s.partition(ctx, string(key))
	if err != nil {
		return Footprint{}, fmt.Errorf("footprint %s: %w", key, err)
	}
	var f Footprint
	found := false
	for _, av := range items {
		switch sk := skOf(av); {
		case sk == SortEvent:
			if f.Item, err = unmarshal(av); err != nil {
				return Footprint{}, err
			}
			found, f.Inline, f.Object = true, f.Item.Payload != nil, f.Item.PayloadObject
		case sk == SortPayload:
			f.PayloadItem = getB(av, "payload") != nil
		case strings.HasPrefix(sk, effectPrefix) && av["result"] != nil:
			f.Effects = append(f.Effects, strings.TrimPrefix(sk, effectPrefix))
		}
	}
	if !found {
		return Footprint{}, fmt.Errorf("footprint %s: %w", key, ErrNotFound)
	}
	return f, nil
}

// effectPrefix starts the sort key of an effect ledger record (package
// effects) in the event's partition.
const effectPrefix = "effect#"

// RemovePayload implements Store. An unfinished event is marked with one
// conditional UpdateItem (none when it is marked already). A finished
// one loses its S3 object (DeleteObject), its payload item (replaced by
// a marker with no payload), its effect results (erased only), then the
// status item is marked, on condition it is still finished, in that
// order, so an erasure cut short is found and finished by the next. An
// event whose copies are all gone already costs the Query alone.
func (s *DynamoDB) RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (Footprint, error) {
	for try := 0; ; try++ {
		f, err := s.Footprint(ctx, key)
		if err != nil {
			return Footprint{}, err
		}
		if !finished(f.Item.Status) {
			f, err = s.eraseWhenFinished(ctx, f, why)
		} else {
			err = s.remove(ctx, f, why, at)
		}
		if errors.Is(err, errRefused) && try == 0 {
			continue // the event finished, or was claimed again, meanwhile
		}
		if errors.Is(err, errRefused) {
			err = fmt.Errorf("remove payload %s: %w", key, ErrClaimChanged)
		}
		if err != nil {
			return Footprint{}, err
		}
		if why == RemovedExpired {
			f.Effects = nil
		}
		return f, nil
	}
}

// finished reports whether an event in status st will not run again
// unless its key is claimed again (an id-only notification).
func finished(st Status) bool { return st == Done || st == Ignored }

// eraseWhenFinished marks the unfinished event of f to have its payload
// erased once it finishes (an expiry gives ErrClaimChanged): it runs once
// more first. errRefused: it finished meanwhile.
func (s *DynamoDB) eraseWhenFinished(ctx context.Context, f Footprint, why string) (Footprint, error) {
	key := f.Item.Key
	if why == RemovedExpired {
		return Footprint{}, fmt.Errorf("remove payload %s: %s, not finished: %w", key, f.Item.Status, ErrClaimChanged)
	}
	if f.Item.EraseWhenFinished {
		return f, nil
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: itemKey(key, SortEvent),
		ConditionExpression:       aws.String("attribute_exists(pk) AND NOT #s IN (:done, :ignored)"),
		UpdateExpression:          aws.String("SET " + attrErasePending + " = :erase"),
		ExpressionAttributeNames:  map[string]string{"#s": "status"},
		ExpressionAttributeValues: attrs{":erase": str(retainErase), ":done": str(string(Done)), ":ignored": str(string(Ignored))},
	})
	if isConditionFailed(err) {
		return Footprint{}, errRefused
	}
	if err != nil {
		return Footprint{}, fmt.Errorf("mark %s to erase when finished: %w", key, err)
	}
	f.Item.EraseWhenFinished, f.Marked = true, true
	return f, nil
}

// remove removes every copy f lists of a finished event's payload, and
// marks its status item; errRefused: it is not finished any more.
func (s *DynamoDB) remove(ctx context.Context, f Footprint, why string, at time.Time) error {
	if f.Item.PayloadRemoved != "" && f.Copies() == 0 && !f.Item.EraseWhenFinished {
		return nil // removed before: nothing to write
	}
	if err := s.removeCopies(ctx, f, why); err != nil {
		return err
	}
	return s.markRemoved(ctx, f.Item.Key, why, at)
}

// removeCopies removes the copies of the payload f lists apart from its
// status item (its S3 objects, its payload item) and, for an erasure, its
// effects' results.
func (s *DynamoDB) removeCopies(ctx context.Context, f Footprint, why string) error {
	key := f.Item.Key
	for _, name := range objectsOf(f) {
		if err := s.bodies.delete(ctx, name); err != nil {
			return fmt.Errorf("remove payload %s: %w", key, err)
		}
	}
	// The payload item becomes a marker that keeps a later payload write
	// (a delivery's, a fetch's) from storing the payload again.
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: attrs{
		"pk": str(string(key)), "sk": str(SortPayload), attrPayloadRemoved: str(why), "expires_at": num(f.Item.ExpiresAt.Unix()),
	}})
	if err != nil {
		return fmt.Errorf("remove payload item %s: %w", key, err)
	}
	if why != RemovedErased {
		return nil
	}
	for _, e := range f.Effects {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: itemKey(key, effectPrefix+e),
			UpdateExpression: aws.String("REMOVE #r"), ExpressionAttributeNames: map[string]string{"#r": "result"},
		})
		if err != nil {
			return fmt.Errorf("remove effect result %s %s: %w", key, e, err)
		}
	}
	return nil
}

// markRemoved marks the status item of the finished event key: its
// payload removed (why, at: the first removal's stay) and out of the
// retain index; errRefused: it is not finished any more.
func (s *DynamoDB) markRemoved(ctx context.Context, key webhook.Key, why string, at time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: itemKey(key, SortEvent),
		ConditionExpression: aws.String("#s IN (:done, :ignored)"),
		UpdateExpression: aws.String("SET " + attrPayloadRemoved + " = if_not_exists(" + attrPayloadRemoved + ", :why), " +
			attrRemovedAt + " = if_not_exists(" + attrRemovedAt + ", :at) REMOVE " +
			strings.Join([]string{attrPayloadDeflate, attrPayloadObject, attrRetain, attrErasePending}, ", ")),
		ExpressionAttributeNames: map[string]string{"#s": "status"},
		ExpressionAttributeValues: attrs{":why": str(why), ":at": str(formatTime(at)),
			":done": str(string(Done)), ":ignored": str(string(Ignored))},
	})
	if isConditionFailed(err) {
		return errRefused
	}
	if err != nil {
		return fmt.Errorf("remove payload %s: %w", key, err)
	}
	return nil
}

// objectsOf returns the S3 objects that may hold f's payload: the one
// its status item names and, when that is a body fetched again (named
// by its own hash), the one its claim named, which the claim's own
// PutObject, held up on the wire, may still have written.
func objectsOf(f Footprint) []string {
	if f.Object == "" {
		return nil
	}
	if own := BodyObject(f.Item.Key, f.Item.PayloadSHA256); own != f.Object {
		return []string{f.Object, own}
	}
	return []string{f.Object}
}

// Retained implements Store with one Query of the retain index per shard.
func (s *DynamoDB) Retained(ctx context.Context, cutoff time.Time, limit int) ([]webhook.Key, error) {
	var keys []webhook.Key
	for shard := 0; shard < PendingShards && len(keys) < limit; shard++ {
		more, err := s.retained(ctx, strconv.Itoa(shard), formatTime(cutoff), limit-len(keys))
		keys = append(keys, more...)
		if err != nil {
			return keys, fmt.Errorf("retained shard %d: %w", shard, err)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// FinishedToErase implements Store with one Query of the retain index's
// partition retainErase.
func (s *DynamoDB) FinishedToErase(ctx context.Context, limit int) ([]webhook.Key, error) {
	keys, err := s.retained(ctx, retainErase, "~", limit) // "~" sorts after every time
	if err != nil {
		return nil, fmt.Errorf("finished events to erase: %w", err)
	}
	return keys, nil
}

// retained reads up to limit keys of the retain index's partition part
// finished before cutoff.
func (s *DynamoDB) retained(ctx context.Context, part, cutoff string, limit int) ([]webhook.Key, error) {
	page, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(RetainIndex),
		KeyConditionExpression:    aws.String("#r = :part AND processed_at < :cutoff"),
		ExpressionAttributeNames:  map[string]string{"#r": attrRetain},
		ExpressionAttributeValues: attrs{":part": str(part), ":cutoff": str(cutoff)},
		Limit:                     aws.Int32(int32(max(1, min(limit, 1000)))),
	})
	if err != nil {
		return nil, err
	}
	var keys []webhook.Key
	for _, av := range page.Items {
		keys = append(keys, webhook.Key(getS(av, "pk")))
	}
	return keys, nil
}

// Attributes of personal-data handling on the status item.
const (
	attrPayloadRemoved = "payload_removed"
	attrRemovedAt      = "removed_at"
	attrRetain         = "retain"
	attrSubjects       = "subjects"
	// attrErasePending marks an event to erase once finished
	// (Item.EraseWhenFinished). Its value is retainErase, which Finish
	// copies into attrRetain: a finished event to erase is listed in
	// the retain index's partition retainErase (FinishedToErase), not
	// in a shard's.
	attrErasePending = "erase_pending"
	retainErase      = "erase"
)
