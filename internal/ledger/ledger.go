// Package ledger is the effect ledger in DynamoDB that the processor runs
// each business through (effects.Runner): each named effect of an event
// is recorded when it finishes, with one conditional PutItem, so a retry
// after a partial failure skips what is recorded and runs only the rest;
// an at-most-once effect (effects.AtMostOnce) is run behind an intent.
// Its items live in the inbox table, in the partition of their event. The
// record of an effect that has run is written with retries until the
// deadline WithRecordDeadline put in the context. `hookinbox inspect` and
// the console read it (Read). Safe for concurrent use.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sort-key prefix of ledger items.
const effectPrefix = "effect#"

// Ledger is the effect ledger in DynamoDB. Its items live in the inbox table,
// in the partition of their event: pk "<provider>#<event id>", sk
// "effect#<name>", with attributes effect, idempotency_key, result and
// expires_at (a TTL in epoch seconds). It is safe for concurrent use.
type Ledger struct {
	db    dynamoDB
	table string
	ttl   time.Duration
	now   func() time.Time
}

// New returns a ledger that keeps its records in table for ttl (no
// expires_at attribute when ttl <= 0). db is typically a *dynamodb.Client.
func New(db dynamoDB, table string, ttl time.Duration) *Ledger {
	return &Ledger{db: db, table: table, ttl: ttl, now: time.Now}
}

// For returns the Runner of the event key. The Runner reads the event's
// records once, with one consistent Query, on its first Run, and keeps them
// for its life: use one Runner per processing attempt.
func (l *Ledger) For(key webhook.Key) effects.Runner {
	return &ledgerRunner{l: l, key: key, attempt: newAttemptID(),
		done: map[string]bool{}, intents: map[string]intent{}, locks: map[string]*sync.Mutex{}}
}

// Records returns the recorded effects of the event key, sorted by effect
// name, read consistently. Intents of at-most-once effects
// that have no outcome are not records.
func (l *Ledger) Records(ctx context.Context, key webhook.Key) ([]effects.Record, error) {
	recs, _, err := l.Read(ctx, key)
	return recs, err
}

// Intent is an at-most-once effect (effects.AtMostOnce) that an attempt started
// and no attempt recorded an outcome for: it may have run. A person
// resolves it (docs/operations.md, "The DLQ alarm fired").
type Intent struct {
	Effect         string      `json:"effect"`
	Key            webhook.Key `json:"key"`
	IdempotencyKey string      `json:"idempotency_key"`
	Attempt        string      `json:"attempt"`    // the ID of the attempt that started it
	StartedAt      time.Time   `json:"started_at"` // when that attempt wrote the intent
}

// Read returns, from one consistent read, the recorded effects of the
// event key and its open intents (started, no outcome), each sorted by
// effect name. A released intent (the call was refused, so not made) is
// neither.
func (l *Ledger) Read(ctx context.Context, key webhook.Key) ([]effects.Record, []Intent, error) {
	items, err := l.items(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	var (
		recs []effects.Record
		open []Intent
	)
	for _, it := range items {
		effect, ik := attrString(it, "effect"), attrString(it, "idempotency_key")
		switch attrString(it, attrState) {
		case "":
			recs = append(recs, effects.Record{Effect: effect, Key: key, IdempotencyKey: ik, Result: attrString(it, "result")})
		case stateStarted:
			started, _ := time.Parse(time.RFC3339Nano, attrString(it, attrStartedAt))
			open = append(open, Intent{Effect: effect, Key: key, IdempotencyKey: ik, Attempt: attrString(it, attrAttempt), StartedAt: started})
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Effect < recs[j].Effect })
	sort.Slice(open, func(i, j int) bool { return open[i].Effect < open[j].Effect })
	return recs, open, nil
}

// items reads every ledger item of the event key consistently: records and
// intents.
func (l *Ledger) items(ctx context.Context, key webhook.Key) ([]map[string]types.AttributeValue, error) {
	in := &dynamodb.QueryInput{
		TableName:              &l.table,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":     str(string(key)),
			":prefix": str(effectPrefix),
		},
		ConsistentRead: aws.Bool(true),
	}
	var items []map[string]types.AttributeValue
	for {
		out, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("read effect ledger of %s: %w", key, err)
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Attributes and states of an at-most-once effect's intent: an item with a
// state is not a record; a record has none.
const (
	attrState     = "state"
	attrAttempt   = "attempt"
	attrStartedAt = "started_at"
	stateStarted  = "started"  // an attempt is making the call
	stateReleased = "released" // the call was refused: not made
)

// item returns the ledger item of r: an outcome, or an intent when state
// is set.
func (l *Ledger) item(r effects.Record, state, attempt string) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		attrPK:            str(string(r.Key)),
		attrSK:            str(effectPrefix + r.Effect),
		"effect":          str(r.Effect),
		"idempotency_key": str(r.IdempotencyKey),
	}
	if r.Result != "" {
		item["result"] = str(r.Result)
	}
	if state != "" {
		item[attrState] = str(state)
		item[attrAttempt] = str(attempt)
		item[attrStartedAt] = str(l.now().UTC().Format(time.RFC3339Nano))
	}
	if l.ttl > 0 {
		exp := l.now().Add(l.ttl).Unix()
		item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(exp, 10)}
	}
	return item
}

// record writes the outcome of an effect that has run, over any intent.
// A condition failure means another attempt recorded it first: fine.
func (l *Ledger) record(ctx context.Context, r effects.Record) error {
	return l.put(ctx, r, l.item(r, "", ""), "attribute_not_exists(pk) OR attribute_exists(#state)", nil, opRecord)
}

// recordOwn writes the outcome of an at-most-once effect over this
// attempt's own intent. A condition failure means another attempt's record
// or intent is there (this attempt lost its lease): nothing to do.
func (l *Ledger) recordOwn(ctx context.Context, r effects.Record, attempt string) error {
	return l.put(ctx, r, l.item(r, "", ""), "attribute_not_exists(pk) OR (#state = :started AND attempt = :attempt)",
		map[string]types.AttributeValue{":started": str(stateStarted), ":attempt": str(attempt)}, opRecord)
}

// intend writes this attempt's intent where there is nothing, a released
// intent, or this attempt's own (a retry of a write whose answer was
// lost). applied is false when a record or another attempt's intent is
// there.
func (l *Ledger) intend(ctx context.Context, r effects.Record, attempt string) (applied bool, err error) {
	err = l.put(ctx, r, l.item(r, stateStarted, attempt),
		"attribute_not_exists(pk) OR #state = :released OR (#state = :started AND attempt = :attempt)",
		map[string]types.AttributeValue{":released": str(stateReleased), ":started": str(stateStarted), ":attempt": str(attempt)},
		"record the start of")
	if errors.Is(err, errConditionFailed) {
		return false, nil
	}
	return err == nil, err
}

// release marks this attempt's intent released: the call was not made.
func (l *Ledger) release(ctx context.Context, r effects.Record, attempt string) error {
	err := l.put(ctx, r, l.item(r, stateReleased, attempt), "#state = :started AND attempt = :attempt",
		map[string]types.AttributeValue{":started": str(stateStarted), ":attempt": str(attempt)}, "release")
	if errors.Is(err, errConditionFailed) {
		return nil // not this attempt's any more: nothing to release
	}
	return err
}

// opRecord names put's operation for record and recordOwn, whose
// condition failure is no error.
const opRecord = "record"

// errConditionFailed: put's condition did not hold.
var errConditionFailed = errors.New("condition failed")

// put writes item under cond. For opRecord a condition failure is no
// error; for the others it is errConditionFailed.
func (l *Ledger) put(ctx context.Context, r effects.Record, item map[string]types.AttributeValue, cond string, values map[string]types.AttributeValue, op string) error {
	in := &dynamodb.PutItemInput{
		TableName:                 &l.table,
		Item:                      item,
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  map[string]string{"#state": attrState},
		ExpressionAttributeValues: values,
	}
	if !strings.Contains(cond, "#state") {
		in.ExpressionAttributeNames = nil
	}
	applied, err := putIf(ctx, l.db, in, fmt.Sprintf("%s effect %s of %s", op, r.Effect, r.Key))
	if err == nil && !applied && op != opRecord {
		return errConditionFailed
	}
	return err
}
