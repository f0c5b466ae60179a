package effects

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/webhook"
)

var (
	// ErrInvalid: an argument the helpers cannot use (an empty effect name,
	// an item without its pk and sk, a version without an event ID). It is
	// a programming error, so it comes marked webhook.Permanent.
	ErrInvalid = errors.New("invalid effect argument")
)

func invalidf(format string, args ...any) error {
	return webhook.Permanent(fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...)))
}

// Runner runs the named effects of one event, each at most once as far as
// the ledger records.
type Runner interface {
	// Do runs fn unless effect name is already recorded for this event, and
	// records it when fn returns nil. fn receives an idempotency key derived
	// from the event key and the effect name, to pass to outside systems.
	// An error from fn is returned wrapped, with its kind (webhook.Permanent)
	// kept, and nothing is recorded.
	Do(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) error) error
}

// ResultRunner is a Runner that can also record a short outcome of an
// effect, such as the ID an outside system gave it. Both ledgers' runners
// are ResultRunners; use DoResult to reach it through a Runner.
type ResultRunner interface {
	Runner
	// DoResult is Do for an fn that returns a short outcome, stored as
	// Record.Result.
	DoResult(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) (result string, err error)) error
}

// DoResult runs fn through r like Runner.Do and records fn's result when r
// is a ResultRunner; with any other Runner the result is dropped.
func DoResult(ctx context.Context, r Runner, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	if rr, ok := r.(ResultRunner); ok {
		return rr.DoResult(ctx, name, fn)
	}
	return r.Do(ctx, name, func(ctx context.Context, ik string) error {
		_, err := fn(ctx, ik)
		return err
	})
}

// Record is one finished effect of one event.
type Record struct {
	Effect         string      `json:"effect"`
	Key            webhook.Key `json:"key"`
	IdempotencyKey string      `json:"idempotency_key"`
	Result         string      `json:"result,omitempty"` // optional short outcome, e.g. an invoice ID
}

// MaxIdempotencyKeyLen is the longest key IdempotencyKey returns, in bytes:
// Stripe's limit.
const MaxIdempotencyKeyLen = 255

// IdempotencyKey returns the key that identifies effect of the event key
// to an outside system: "hookinbox:<provider>#<event id>:<effect>", or, when
// that is longer than MaxIdempotencyKeyLen bytes, "hookinbox:sha256:" and
// the hex SHA-256 of that string. It is deterministic, so every attempt of
// the effect sends the same key.
func IdempotencyKey(key webhook.Key, effect string) string {
	k := "hookinbox:" + string(key) + ":" + effect
	if len(k) <= MaxIdempotencyKeyLen {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return "hookinbox:sha256:" + hex.EncodeToString(sum[:])
}

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

// NewLedger returns a ledger that keeps its records in table for ttl (no
// expires_at attribute when ttl <= 0). db is typically a *dynamodb.Client.
func NewLedger(db dynamoDB, table string, ttl time.Duration) *Ledger {
	return &Ledger{db: db, table: table, ttl: ttl, now: time.Now}
}

// For returns the Runner of the event key. The Runner reads the event's
// records once, with one consistent Query, on its first Do, and keeps them
// for its life: use one Runner per processing attempt.
func (l *Ledger) For(key webhook.Key) Runner {
	return &ledgerRunner{l: l, key: key, locks: map[string]*sync.Mutex{}}
}

// Records returns the recorded effects of the event key, sorted by effect
// name, read consistently.
func (l *Ledger) Records(ctx context.Context, key webhook.Key) ([]Record, error) {
	in := &dynamodb.QueryInput{
		TableName:              &l.table,
		KeyConditionExpression: ptr("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":     str(string(key)),
			":prefix": str(effectPrefix),
		},
		ConsistentRead: ptr(true),
	}
	var recs []Record
	for {
		out, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("read effect ledger of %s: %w", key, err)
		}
		for _, it := range out.Items {
			recs = append(recs, Record{
				Effect:         attrString(it, "effect"),
				Key:            key,
				IdempotencyKey: attrString(it, "idempotency_key"),
				Result:         attrString(it, "result"),
			})
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	sortRecords(recs)
	return recs, nil
}

func (l *Ledger) record(ctx context.Context, r Record) error {
	item := map[string]types.AttributeValue{
		attrPK:            str(string(r.Key)),
		attrSK:            str(effectPrefix + r.Effect),
		"effect":          str(r.Effect),
		"idempotency_key": str(r.IdempotencyKey),
	}
	if r.Result != "" {
		item["result"] = str(r.Result)
	}
	if l.ttl > 0 {
		exp := l.now().Add(l.ttl).Unix()
		item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(exp, 10)}
	}
	// A condition failure means another attempt recorded it first: fine.
	if _, err := PutOnce(ctx, l.db, l.table, item); err != nil {
		return fmt.Errorf("record effect %s of %s: %w", r.Effect, r.Key, err)
	}
	return nil
}

type ledgerRunner struct {
	l   *Ledger
	key webhook.Key

	mu    sync.Mutex
	done  map[string]bool // nil until loaded
	locks map[string]*sync.Mutex
}

func (r *ledgerRunner) Do(ctx context.Context, name string, fn func(context.Context, string) error) error {
	return r.DoResult(ctx, name, func(ctx context.Context, ik string) (string, error) { return "", fn(ctx, ik) })
}

func (r *ledgerRunner) DoResult(ctx context.Context, name string, fn func(context.Context, string) (string, error)) error {
	if name == "" {
		return invalidf("empty effect name for %s", r.key)
	}
	lock := r.lock(name)
	lock.Lock()
	defer lock.Unlock()

	done, err := r.recorded(ctx, name)
	if err != nil || done {
		return err
	}
	ik := IdempotencyKey(r.key, name)
	res, err := fn(ctx, ik)
	if err != nil {
		return fmt.Errorf("effect %s of %s: %w", name, r.key, err)
	}
	if err := r.l.record(ctx, Record{Effect: name, Key: r.key, IdempotencyKey: ik, Result: res}); err != nil {
		return err
	}
	r.mu.Lock()
	r.done[name] = true
	r.mu.Unlock()
	return nil
}

// lock returns the mutex that serializes the Runner's calls for one effect.
func (r *ledgerRunner) lock(name string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.locks[name]
	if !ok {
		m = new(sync.Mutex)
		r.locks[name] = m
	}
	return m
}

// recorded reports whether effect name is recorded, loading the event's
// records on first use.
func (r *ledgerRunner) recorded(ctx context.Context, name string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		recs, err := r.l.Records(ctx, r.key)
		if err != nil {
			return false, err
		}
		r.done = make(map[string]bool, len(recs))
		for _, rec := range recs {
			r.done[rec.Effect] = true
		}
	}
	return r.done[name], nil
}

func attrString(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func sortRecords(recs []Record) {
	sort.Slice(recs, func(i, j int) bool { return recs[i].Effect < recs[j].Effect })
}
