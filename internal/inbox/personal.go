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
// subjects), never by the subject itself but by a keyed hash of it: one
// small item per subject and event, partition subjectPrefix+hash, sort key
// the event key, expiring with the event. Erasing a subject, or the
// retention of a finished event's payload, removes every stored copy of the
// payload (inline, payload item, S3 object) and, for an erasure, the
// results of its finished effects; the status item stays, so a provider's
// retry is still a duplicate. Each erasure leaves an Erasure record.

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
// (a shard number, removed with the payload), sort key "processed_at".
const RetainIndex = "retain"

// Footprint is what the inbox keeps of one event.
type Footprint struct {
	Item        Item     // the status item, the dedupe record
	Inline      bool     // the payload rides in the status item
	PayloadItem bool     // the payload has an item of its own
	Object      string   // the S3 object of a large payload, or ""
	Effects     []string // the finished effects whose result is stored
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

// Erasure is the audit record of one erasure: no personal data, only the
// subject's hash.
type Erasure struct {
	At          time.Time
	By          string // who asked: "cli:<user>", "shopify customers/redact <key>"
	SubjectHash string
	Events      int // events whose payload was erased
	Copies      int // stored copies removed (Footprint.Copies)
	Queued      int // whole events deleted from a queue (the Stripe EventBridge DLQ)
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

// SubjectEvents implements Store with one Query per hash.
func (s *DynamoDB) SubjectEvents(ctx context.Context, hashes []string) ([]webhook.Key, error) {
	var keys []webhook.Key
	for _, h := range hashes {
		items, err := s.partition(ctx, subjectPrefix+h)
		if err != nil {
			return nil, fmt.Errorf("subject events: %w", err)
		}
		for _, it := range items {
			keys = append(keys, webhook.Key(skOf(it)))
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// ProviderEvents implements Store with a paged Scan.
func (s *DynamoDB) ProviderEvents(ctx context.Context, provider string) ([]webhook.Key, error) {
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("sk = :event AND provider = :p"),
		ProjectionExpression:      aws.String("pk"),
		ExpressionAttributeValues: attrs{":event": str(SortEvent), ":p": str(provider)},
	}
	var keys []webhook.Key
	for {
		page, err := s.db.Scan(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("events of %s: %w", provider, err)
		}
		for _, av := range page.Items {
			keys = append(keys, webhook.Key(getS(av, "pk")))
		}
		if len(page.LastEvaluatedKey) == 0 {
			slices.Sort(keys)
			return keys, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
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

// RemovePayload implements Store: DeleteObject, the payload item replaced
// by a marker with no payload, each effect result removed (erased only),
// then the status item marked, in that order, so an erasure cut short is
// found and finished by the next.
func (s *DynamoDB) RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (Footprint, error) {
	f, err := s.Footprint(ctx, key)
	if err != nil {
		return Footprint{}, err
	}
	if why == RemovedExpired && !(f.Item.Status == Done || f.Item.Status == Ignored) {
		return Footprint{}, fmt.Errorf("remove payload %s: %s, not finished: %w", key, f.Item.Status, ErrClaimChanged)
	}
	if f.Object != "" {
		if err := s.bodies.delete(ctx, f.Object); err != nil {
			return Footprint{}, fmt.Errorf("remove payload %s: %w", key, err)
		}
	}
	// The payload item becomes a marker that keeps a later payload write
	// (a delivery's, a fetch's) from storing the payload again.
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: attrs{
		"pk": str(string(key)), "sk": str(SortPayload), attrPayloadRemoved: str(why), "expires_at": num(f.Item.ExpiresAt.Unix()),
	}})
	if err != nil {
		return Footprint{}, fmt.Errorf("remove payload item %s: %w", key, err)
	}
	if why == RemovedErased {
		for _, e := range f.Effects {
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(s.table), Key: itemKey(key, effectPrefix+e),
				UpdateExpression: aws.String("REMOVE #r"), ExpressionAttributeNames: map[string]string{"#r": "result"},
			})
			if err != nil {
				return Footprint{}, fmt.Errorf("remove effect result %s %s: %w", key, e, err)
			}
		}
	} else {
		f.Effects = nil
	}
	cond, values, names := "attribute_exists(pk)", attrs{":why": str(why), ":at": str(formatTime(at))}, map[string]string(nil)
	if why == RemovedExpired {
		cond += " AND #s IN (:done, :ignored)"
		values[":done"], values[":ignored"] = str(string(Done)), str(string(Ignored))
		names = map[string]string{"#s": "status"}
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: itemKey(key, SortEvent),
		ConditionExpression: aws.String(cond),
		UpdateExpression: aws.String("SET " + attrPayloadRemoved + " = if_not_exists(" + attrPayloadRemoved + ", :why), " +
			attrRemovedAt + " = if_not_exists(" + attrRemovedAt + ", :at) REMOVE " + attrPayloadDeflate + ", " + attrPayloadObject + ", " + attrRetain),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if isConditionFailed(err) {
		return Footprint{}, fmt.Errorf("remove payload %s: %w", key, ErrClaimChanged)
	}
	if err != nil {
		return Footprint{}, fmt.Errorf("remove payload %s: %w", key, err)
	}
	return f, nil
}

// Retained implements Store with one Query of the retain index per shard.
func (s *DynamoDB) Retained(ctx context.Context, cutoff time.Time, limit int) ([]webhook.Key, error) {
	var keys []webhook.Key
	for shard := 0; shard < PendingShards && len(keys) < limit; shard++ {
		in := &dynamodb.QueryInput{
			TableName:                aws.String(s.table),
			IndexName:                aws.String(RetainIndex),
			KeyConditionExpression:   aws.String("#r = :shard AND processed_at < :cutoff"),
			ExpressionAttributeNames: map[string]string{"#r": attrRetain},
			ExpressionAttributeValues: attrs{
				":shard": str(strconv.Itoa(shard)), ":cutoff": str(formatTime(cutoff)),
			},
			Limit: aws.Int32(int32(min(limit-len(keys), 1000))),
		}
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return keys, fmt.Errorf("retained shard %d: %w", shard, err)
		}
		for _, av := range page.Items {
			keys = append(keys, webhook.Key(getS(av, "pk")))
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// RecordErasure implements Store with one PutItem, kept without expiry.
func (s *DynamoDB) RecordErasure(ctx context.Context, e Erasure) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: attrs{
		"pk": str(erasurePartition), "sk": str(formatTime(e.At) + "#" + e.SubjectHash),
		"at": str(formatTime(e.At)), "by": str(e.By), "subject_hash": str(e.SubjectHash),
		"events": num(int64(e.Events)), "copies": num(int64(e.Copies)),
		"queued": num(int64(e.Queued)),
	}})
	if err != nil {
		return fmt.Errorf("record erasure: %w", err)
	}
	return nil
}

// Erasures implements Store with one Query.
func (s *DynamoDB) Erasures(ctx context.Context) ([]Erasure, error) {
	items, err := s.partition(ctx, erasurePartition)
	if err != nil {
		return nil, fmt.Errorf("erasures: %w", err)
	}
	var out []Erasure
	for _, av := range items {
		at, _ := time.Parse(time.RFC3339Nano, getS(av, "at"))
		events, _ := strconv.Atoi(numOf(av, "events"))
		copies, _ := strconv.Atoi(numOf(av, "copies"))
		queued, _ := strconv.Atoi(numOf(av, "queued"))
		out = append(out, Erasure{At: at, By: getS(av, "by"), SubjectHash: getS(av, "subject_hash"), Events: events, Copies: copies, Queued: queued})
	}
	return out, nil
}

// numOf returns the number attribute name of m as text, or "".
func numOf(m attrs, name string) string {
	v, _ := m[name].(*types.AttributeValueMemberN)
	if v == nil {
		return ""
	}
	return v.Value
}

// Attributes of personal-data handling on the status item.
const (
	attrPayloadRemoved = "payload_removed"
	attrRemovedAt      = "removed_at"
	attrRetain         = "retain"
)
