package inbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sort keys of the items of one event.
const (
	SortEvent   = "event"
	SortPayload = "payload"
)

// PendingIndex is the sparse global secondary index over unfinished items:
// partition key "pending" (a shard number, removed when the event is
// finished), sort key "enqueued_at" (epoch milliseconds).
const PendingIndex = "pending"

// PendingAttributes are the attributes the pending index projects beside
// the keys (template.yaml's INCLUDE projection): what the reconciler and
// `hookinbox status` read of an unfinished event. The payload is left
// out, so an index entry costs one write unit however large the status
// item is.
var PendingAttributes = []string{"status", "provider", "event_type", "received_at", "lease_until", "attempts"}

// pendingView is it as the pending index holds it.
func pendingView(it Item) Item {
	return Item{
		Key: it.Key, Status: it.Status, Provider: it.Provider, EventType: it.EventType,
		ReceivedAt: it.ReceivedAt, EnqueuedAt: it.EnqueuedAt, LeaseUntil: it.LeaseUntil, Attempts: it.Attempts,
	}
}

// dynamoDBAPI lists the DynamoDB calls the store makes (*dynamodb.Client).
type dynamoDBAPI interface {
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// DynamoDB is the Store on a DynamoDB table with string keys pk and sk.
//
// Its client retries (throttling, 5xx, lost connections: the SDK's
// standard retryer), so a conditional write refused on a retry may be
// refused by its own first attempt, applied although its answer was lost.
// Each write learns from the SDK's retry metadata whether it was sent more
// than once, and then tells that case apart by the marks it writes (the
// claim's received_at and payload hash, the lease's owner and end, the
// outcome and its time) and succeeds.
type DynamoDB struct {
	db     dynamoDBAPI
	table  string
	bodies *Bodies // nil: no bucket; a payload over MaxPayloadBytes gives errNoBucket
}

// NewDynamoDB returns the store on table, using a ready client
// (dynamodb.NewFromConfig).
func NewDynamoDB(db dynamoDBAPI, table string) *DynamoDB {
	return &DynamoDB{db: db, table: table}
}

var _ Store = (*DynamoDB)(nil)

// WithBodies returns s keeping the payloads too large for an item in
// bodies (see Claim.External); nil keeps none.
func (s *DynamoDB) WithBodies(bodies *Bodies) *DynamoDB {
	c := *s
	c.bodies = bodies
	return &c
}

// Claim implements Store with one PutItem conditioned on
// attribute_not_exists(pk) (for an IDOnly event, or a finished item whose
// renew_after has passed); an inline payload rides in it.
func (s *DynamoDB) Claim(ctx context.Context, c Claim) (Item, error) {
	if err := CheckSubjects(c.Subjects); err != nil {
		return Item{}, fmt.Errorf("claim %s: %w", c.Event.Key(), err)
	}
	it, packed := c.newItem()
	in := &dynamodb.PutItemInput{
		TableName:                           aws.String(s.table),
		Item:                                marshalClaim(it, packed),
		ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if c.Event.IDOnly {
		in.ConditionExpression = aws.String("attribute_not_exists(pk) OR (#s IN (:done, :ignored) AND (attribute_not_exists(renew_after) OR renew_after <= :now))")
		in.ExpressionAttributeNames = map[string]string{"#s": "status"}
		in.ExpressionAttributeValues = attrs{
			":done":    str(string(Done)),
			":ignored": str(string(Ignored)),
			":now":     millis(it.ReceivedAt),
		}
	}
	ctx, attempts := withAttempts(ctx)
	_, err := s.db.PutItem(ctx, in, recordAttempts)
	if err != nil {
		// A retried claim refused by its own first attempt finds the
		// item it wrote: this claim's received_at and payload hash.
		mine := func(st Item) bool {
			return st.ReceivedAt.Equal(it.ReceivedAt) && st.PayloadSHA256 == it.PayloadSHA256
		}
		return s.whyNot(ctx, it.Key, "claim", err, *attempts > 1, ErrAlreadyClaimed, mine)
	}
	return it, nil
}

// PutPayload implements Store with one UpdateItem, which creates the
// payload item when it is missing: the bytes are set only if none are
// stored (if_not_exists), the claim's time and expiry always. A payload
// over MaxPayloadBytes is written with one PutObject instead, as the
// object it.PayloadObject names (its claim's, Claim.PayloadItem) when
// these are the claim's bytes; other bytes (what the provider's API
// serves for a lost object) get their own object, which the status item
// names first (one UpdateItem), so every read checks them against their
// own hash.
func (s *DynamoDB) PutPayload(ctx context.Context, it Item, raw []byte) error {
	if len(raw) > MaxPayloadBytes {
		return s.putObject(ctx, it, raw)
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(s.table),
		Key:              itemKey(it.Key, SortPayload),
		UpdateExpression: aws.String("SET payload = if_not_exists(payload, :raw), received_at = :ra, expires_at = :exp"),
		// A payload removed on purpose (RemovePayload) stays removed.
		ConditionExpression: aws.String("attribute_not_exists(" + attrPayloadRemoved + ")"),
		ExpressionAttributeValues: attrs{
			":raw": &types.AttributeValueMemberB{Value: raw},
			":ra":  str(formatTime(it.ReceivedAt)),
			":exp": num(it.ExpiresAt.Unix()),
		},
	})
	if isConditionFailed(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("put payload %s: %w", it.Key, err)
	}
	return nil
}

// putObject is PutPayload of a payload over MaxPayloadBytes.
func (s *DynamoDB) putObject(ctx context.Context, it Item, raw []byte) error {
	if it.PayloadObject == "" {
		return fmt.Errorf("put payload %s: %w", it.Key, ErrNoBodyLocation)
	}
	name := BodyObject(it.Key, PayloadSHA256(raw))
	if name != it.PayloadObject {
		_, err := s.update(ctx, it.Key, "put payload", ErrRemoved, nil, &dynamodb.UpdateItemInput{
			ConditionExpression:       aws.String("attribute_exists(pk) AND attribute_not_exists(" + attrPayloadRemoved + ")"),
			UpdateExpression:          aws.String("SET " + attrPayloadObject + " = :name"),
			ExpressionAttributeValues: attrs{":name": str(name)},
		})
		if errors.Is(err, ErrRemoved) {
			return nil // removed on purpose: it stays removed
		}
		if err != nil {
			return err
		}
	}
	if err := s.bodies.put(ctx, name, raw); err != nil {
		return fmt.Errorf("put payload %s: %w", it.Key, err)
	}
	return nil
}

// Payload implements Store with one consistent Query that reads the
// status item and the payload item together ("event" and "payload" are
// the only sort keys between them: the ledger's "effect#..." sort
// before): the inline payload if the status item carries one, the S3
// object it names (one GetObject, checked against its hash), else the
// payload item's.
func (s *DynamoDB) Payload(ctx context.Context, key webhook.Key) ([]byte, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :event AND :payload"),
		ExpressionAttributeValues: attrs{
			":pk":      str(string(key)),
			":event":   str(SortEvent),
			":payload": str(SortPayload),
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("payload %s: %w", key, err)
	}
	p := storedPayload(out.Items)
	raw, err := p.inline, p.err
	switch {
	case raw == nil && err == nil && p.object != "":
		raw, err = s.bodies.get(ctx, p.object)
		if errors.Is(err, ErrNotFound) && p.separate != nil {
			// A body the provider's API served since (the processor
			// stores a small one in a payload item) stands in for a lost
			// object.
			raw, err = p.separate, nil
		}
	case raw == nil && err == nil:
		raw = p.separate
		if raw == nil {
			err = ErrNotFound
		}
	}
	if err != nil {
		return nil, fmt.Errorf("payload %s: %w", key, err)
	}
	return raw, nil
}

// stored is where the items of an event keep its payload.
type stored struct {
	inline   []byte // the status item's, inflated
	object   string // the S3 object the status item names
	separate []byte // the payload item's
	err      error  // the inline payload cannot be inflated
}

// storedPayload returns where items, an event's status and payload items,
// keep its payload.
func storedPayload(items []attrs) stored {
	var p stored
	for _, item := range items {
		if b := getB(item, attrPayloadDeflate); b != nil {
			p.inline, p.err = inflate(b)
			return p
		}
		if skOf(item) == SortEvent {
			p.object = getS(item, attrPayloadObject)
		}
		if b := getB(item, "payload"); b != nil && skOf(item) == SortPayload {
			p.separate = b
		}
	}
	return p
}

// Get implements Store.
func (s *DynamoDB) Get(ctx context.Context, key webhook.Key) (Item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            itemKey(key, SortEvent),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return Item{}, fmt.Errorf("get %s: %w", key, err)
	}
	if out.Item == nil {
		return Item{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	return unmarshal(out.Item)
}

// MarkEnqueued implements Store with one conditional UpdateItem.
func (s *DynamoDB) MarkEnqueued(ctx context.Context, key webhook.Key, cutoff, now time.Time, statuses ...Status) (Item, error) {
	names := map[string]string{"#s": "status"}
	values := attrs{
		":cutoff": millis(cutoff),
		":now":    millis(now),
	}
	in := ""
	for i, st := range Enqueueable(statuses) {
		p := ":st" + strconv.Itoa(i)
		values[p] = str(string(st))
		if in != "" {
			in += ", "
		}
		in += p
	}
	mine := func(st Item) bool { return st.EnqueuedAt.UnixMilli() == now.UnixMilli() }
	return s.update(ctx, key, "mark enqueued", ErrNotDue, mine, &dynamodb.UpdateItemInput{
		ConditionExpression:       aws.String("attribute_exists(pk) AND #s IN (" + in + ") AND enqueued_at <= :cutoff"),
		UpdateExpression:          aws.String("SET enqueued_at = :now"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
}

// Lease implements Store with one conditional UpdateItem.
func (s *DynamoDB) Lease(ctx context.Context, key webhook.Key, owner string, now time.Time, d time.Duration) (Item, error) {
	l := lease{key: key, owner: owner, until: now.Add(d)}
	it, err := s.update(ctx, key, "lease", nil, l.mine, &dynamodb.UpdateItemInput{
		ConditionExpression:      aws.String("attribute_exists(pk) AND (#s IN (:received, :failed) OR (#s = :processing AND lease_until < :now))"),
		UpdateExpression:         aws.String(leaseSet + " ADD attempts :one REMOVE processed_at, outcome"),
		ExpressionAttributeNames: map[string]string{"#s": "status"},
		ExpressionAttributeValues: l.values(attrs{
			":received": str(string(Received)),
			":failed":   str(string(Failed)),
			":now":      millis(now),
		}),
	})
	if err != nil && errors.Is(err, errRefused) && it.Status == Dead {
		// A DEAD event's message came back from the DLQ (a native
		// redrive), so a person asked for it. As a replay's Requeue does,
		// the lease puts it back in the pending index, clears the parked
		// outcome and starts the failure counts afresh (this lease is
		// attempt 1): an event parked after an outage is not parked again
		// by its first failure.
		it, err = s.update(ctx, key, "lease", nil, l.mine, &dynamodb.UpdateItemInput{
			ConditionExpression:       aws.String("#s = :dead"),
			UpdateExpression:          aws.String(leaseSet + ", attempts = :one REMOVE processed_at, outcome, infra_failures"),
			ExpressionAttributeNames:  map[string]string{"#s": "status"},
			ExpressionAttributeValues: l.values(attrs{":dead": str(string(Dead))}),
		})
	}
	if err != nil && errors.Is(err, errRefused) {
		return it, refusedLease(key, it, now)
	}
	return it, err
}

// leaseSet is what every lease sets; taken_from keeps the owner whose
// lease ran out ("-" when there was none): the processor counts lease
// takeovers from it.
const leaseSet = "SET #s = :processing, taken_from = if_not_exists(lease_owner, :nobody), lease_owner = :owner, lease_until = :until, pending = :shard"

// lease is one Lease of key by owner, until a time.
type lease struct {
	key   webhook.Key
	owner string
	until time.Time
}

// mine reports whether st shows this lease: a Lease retried by the SDK,
// refused by its own first attempt.
func (l lease) mine(st Item) bool {
	return st.Status == Processing && st.LeaseOwner == l.owner && st.LeaseUntil.UnixMilli() == l.until.UnixMilli()
}

// values returns the values of leaseSet, and more.
func (l lease) values(more attrs) attrs {
	v := attrs{
		":shard":      str(pendingShard(l.key)),
		":processing": str(string(Processing)),
		":owner":      str(l.owner),
		":until":      millis(l.until),
		":one":        num(1),
		":nobody":     str(noOwner),
	}
	maps.Copy(v, more)
	return v
}

// Finish implements Store with one UpdateItem conditioned on the lease owner.
func (s *DynamoDB) Finish(ctx context.Context, key webhook.Key, owner string, r Result) (Item, error) {
	expr, values := finishUpdate(key, r)
	values[":processing"], values[":owner"] = str(string(Processing)), str(owner)
	return s.update(ctx, key, "finish", ErrLeaseLost, finishedWith(r), &dynamodb.UpdateItemInput{
		ConditionExpression:       aws.String("#s = :processing AND lease_owner = :owner"),
		UpdateExpression:          aws.String(expr),
		ExpressionAttributeNames:  map[string]string{"#s": "status"},
		ExpressionAttributeValues: values,
	})
}

// finishUpdate returns the UpdateExpression that writes r, the outcome of
// a lease of key, and its values: the status and outcome, the lease
// given up, the counts r changes, and the indexes the event enters or
// leaves.
func finishUpdate(key webhook.Key, r Result) (string, attrs) {
	set := "SET #s = :status, outcome = :outcome"
	remove := " REMOVE lease_owner, lease_until"
	values := attrs{":status": str(string(r.Status)), ":outcome": str(r.Outcome)}
	if r.Error != "" {
		set += ", last_error = :err"
		values[":err"] = str(r.Error)
	}
	if r.RenewAfter.IsZero() {
		remove += ", renew_after"
	} else {
		set += ", renew_after = :renew"
		values[":renew"] = millis(r.RenewAfter)
	}
	if r.Indexed {
		remove += ", " + attrSubjects
	}
	if finished(r.Status) {
		// Listed in the retain index until its payload is removed: in
		// its shard, or in the partition of events to erase when an
		// erasure waits for it (attrErasePending holds retainErase).
		set += ", " + attrRetain + " = if_not_exists(" + attrErasePending + ", :shard)"
		values[":shard"] = str(pendingShard(key))
	}
	if r.Status.Final() {
		set += ", processed_at = :at"
		values[":at"] = str(formatTime(r.At))
		remove += ", pending"
	} else {
		set += ", enqueued_at = :ms"
		values[":ms"] = millis(r.At)
	}
	return set + finishCounts(r, values) + remove, values
}

// finishCounts returns the ADD clause of the counts r changes (an
// infrastructure failure, an attempt taken back), its values put in
// values; "" for none.
func finishCounts(r Result, values attrs) string {
	var adds []string
	if r.Infrastructure {
		adds = append(adds, "infra_failures :one")
		values[":one"] = num(1)
	}
	if r.Uncounted {
		adds = append(adds, "attempts :minus")
		values[":minus"] = num(-1)
	}
	if len(adds) == 0 {
		return ""
	}
	return " ADD " + strings.Join(adds, ", ")
}

// finishedWith reports whether an item shows the outcome r written: a
// Finish retried by the SDK, refused by its own first attempt.
func finishedWith(r Result) func(Item) bool {
	return func(st Item) bool {
		at := st.EnqueuedAt.UnixMilli() == r.At.UnixMilli()
		if r.Status.Final() {
			at = st.ProcessedAt.Equal(r.At)
		}
		return at && st.Status == r.Status && st.Outcome == r.Outcome && st.LeaseOwner == "" &&
			st.RenewAfter.UnixMilli() == r.RenewAfter.UnixMilli() &&
			(r.Error == "" || st.LastError == r.Error)
	}
}

// EndHold implements Store with one conditional UpdateItem.
func (s *DynamoDB) EndHold(ctx context.Context, key webhook.Key) error {
	_, err := s.update(ctx, key, "end hold", ErrNotHeld, nil, &dynamodb.UpdateItemInput{
		ConditionExpression:       aws.String("#s = :ignored"),
		UpdateExpression:          aws.String("REMOVE renew_after"),
		ExpressionAttributeNames:  map[string]string{"#s": "status"},
		ExpressionAttributeValues: attrs{":ignored": str(string(Ignored))},
	})
	return err
}

// Requeue implements Store with one conditional UpdateItem.
func (s *DynamoDB) Requeue(ctx context.Context, key webhook.Key, now time.Time) (Item, error) {
	// No mark to check: a retry after an applied Requeue meets its
	// condition again and writes the same.
	it, err := s.update(ctx, key, "requeue", nil, nil, &dynamodb.UpdateItemInput{
		ConditionExpression: aws.String("attribute_exists(pk) AND #s <> :done AND (#s <> :processing OR lease_until < :now)"),
		// A replay starts the failure counts afresh: the cause was fixed.
		UpdateExpression: aws.String("SET #s = :failed, enqueued_at = :now, pending = :shard, attempts = :zero REMOVE lease_owner, lease_until, processed_at, outcome, infra_failures, " + attrRetain),
		ExpressionAttributeNames: map[string]string{
			"#s": "status",
		},
		ExpressionAttributeValues: attrs{
			":done":       str(string(Done)),
			":processing": str(string(Processing)),
			":failed":     str(string(Failed)),
			":now":        millis(now),
			":shard":      str(pendingShard(key)),
			":zero":       num(0),
		},
	})
	if err != nil && errors.Is(err, errRefused) {
		why := ErrFinished
		if it.Status == Processing {
			why = ErrLeaseHeld
		}
		return it, fmt.Errorf("requeue %s: %w", key, why)
	}
	return it, err
}

// Pending implements Store with PendingShard on each shard in turn.
func (s *DynamoDB) Pending(ctx context.Context, cutoff time.Time, limit int) ([]Item, error) {
	return pendingAll(ctx, s, cutoff, limit)
}

// PendingShard implements Store with one Query of the sparse index, paged
// until limit.
func (s *DynamoDB) PendingShard(ctx context.Context, shard int, cutoff time.Time, limit int) ([]Item, error) {
	if shard < 0 || shard >= PendingShards {
		return nil, fmt.Errorf("pending shard %d: not in [0, %d)", shard, PendingShards)
	}
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		IndexName:              aws.String(PendingIndex),
		KeyConditionExpression: aws.String("pending = :shard AND enqueued_at < :cutoff"),
		ExpressionAttributeValues: attrs{
			":shard":  str(strconv.Itoa(shard)),
			":cutoff": millis(cutoff),
		},
	}
	if limit > 0 {
		in.Limit = aws.Int32(int32(min(limit, 1000)))
	}
	var out []Item
	for limit <= 0 || len(out) < limit {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return out, fmt.Errorf("pending shard %d: %w", shard, err)
		}
		for _, av := range page.Items {
			it, err := unmarshal(av)
			if err != nil {
				return out, err
			}
			out = append(out, pendingView(it))
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// pendingAll is Pending over PendingShard.
func pendingAll(ctx context.Context, s interface {
	PendingShard(context.Context, int, time.Time, int) ([]Item, error)
}, cutoff time.Time, limit int) ([]Item, error) {
	var out []Item
	for shard := 0; shard < PendingShards && (limit <= 0 || len(out) < limit); shard++ {
		items, err := s.PendingShard(ctx, shard, cutoff, limit-len(out))
		out = append(out, items...)
		if err != nil {
			return out, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EnqueuedAt.Before(out[j].EnqueuedAt) })
	return out, nil
}

// errRefused marks a condition failure that the caller explains itself.
var errRefused = errors.New("condition refused")

// update runs one conditional UpdateItem on the status item and returns the
// new item. When the condition fails it returns the stored item and refused
// wrapped with op (or errRefused when refused is nil); but the stored item
// and no error when mine (if not nil) finds its own marks in it after a
// retry (see whyNot).
func (s *DynamoDB) update(ctx context.Context, key webhook.Key, op string, refused error, mine func(Item) bool, in *dynamodb.UpdateItemInput) (Item, error) {
	in.TableName = aws.String(s.table)
	in.Key = itemKey(key, SortEvent)
	in.ReturnValues = types.ReturnValueAllNew
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	ctx, attempts := withAttempts(ctx)
	out, err := s.db.UpdateItem(ctx, in, recordAttempts)
	if err != nil {
		if refused == nil {
			refused = errRefused
		}
		return s.whyNot(ctx, key, op, err, *attempts > 1, refused, mine)
	}
	return unmarshal(out.Attributes)
}

// whyNot turns a failed conditional write into the stored item and refused,
// or ErrNotFound when there is no item. DynamoDB returns the old item with
// the error; emulators that don't (dynalite) cost one consistent GetItem.
//
// A write the client sent more than once (sentTwice) may be refused by its own first
// attempt, applied although its answer was lost: when mine (if not nil)
// finds the write's own marks in the stored item after such a retry,
// whyNot returns the stored item and no error, as the first attempt
// would have.
func (s *DynamoDB) whyNot(ctx context.Context, key webhook.Key, op string, err error, sentTwice bool, refused error, mine func(Item) bool) (Item, error) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return Item{}, fmt.Errorf("%s %s: %w", op, key, err)
	}
	retried := mine != nil && sentTwice
	if ccf.Item != nil {
		it, uerr := unmarshal(ccf.Item)
		if uerr != nil {
			return Item{}, uerr
		}
		if retried && mine(it) {
			return it, nil
		}
		return it, fmt.Errorf("%s %s: %w", op, key, refused)
	}
	it, gerr := s.Get(ctx, key)
	if errors.Is(gerr, ErrNotFound) {
		return Item{}, fmt.Errorf("%s %s: %w", op, key, ErrNotFound)
	}
	if gerr != nil {
		return Item{}, fmt.Errorf("%s %s: condition failed, then %w", op, key, gerr)
	}
	if retried && mine(it) {
		return it, nil
	}
	return it, fmt.Errorf("%s %s: %w", op, key, refused)
}

// skOf returns an item's sort key.
func skOf(item attrs) string { return getS(item, "sk") }

func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// attemptsKey is the context key of the counter recordAttempts fills.
type attemptsKey struct{}

// withAttempts returns ctx carrying a counter that a call made with the
// option recordAttempts sets to the number of HTTP attempts the SDK's
// retryer made, errors included.
func withAttempts(ctx context.Context) (context.Context, *int) {
	n := new(int)
	return context.WithValue(ctx, attemptsKey{}, n), n
}

// recordAttempts is the per-call client option that reads the SDK's own
// retry metadata (retry.GetAttemptResults) into withAttempts's counter.
func recordAttempts(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(attemptRecorder, middleware.After)
	})
}

var attemptRecorder = middleware.InitializeMiddlewareFunc("hookinbox.inbox.attempts",
	func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleInitialize(ctx, in)
		if n, ok := ctx.Value(attemptsKey{}).(*int); ok {
			if r, ok := retry.GetAttemptResults(md); ok {
				*n = len(r.Results)
			}
		}
		return out, md, err
	})
