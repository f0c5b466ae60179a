package effects

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// Func is what an effect does: it receives an idempotency key derived
// from the event key and the effect name, to pass to outside systems, and
// returns a short outcome to record (such as the ID an outside system
// gave it; "" for none).
type Func func(ctx context.Context, idempotencyKey string) (result string, err error)

// Effect is one named effect of an event and how it must run.
type Effect struct {
	// Name identifies the effect within its event; it never changes, or a
	// retry runs the effect again under the new name.
	Name string
	// AtMostOnce makes the ledger record an intent before Fn and never
	// call Fn again for the event once an attempt may have called it
	// (see AtMostOnce). Without it the effect runs at least once, with the
	// same idempotency key on every attempt.
	AtMostOnce bool
	// Fn makes the effect happen.
	Fn Func
}

// Runner runs the named effects of one event, each once as far as the
// ledger records. Run is the only way to run an effect, so a wrapper that
// passes the Effect on keeps its guarantee (Middleware, With).
type Runner interface {
	// Run runs e.Fn unless effect e.Name is already recorded for this
	// event, and records it, with e.Fn's result, when e.Fn returns nil.
	// An error from e.Fn is returned wrapped, with its kind
	// (webhook.Permanent) kept, and nothing is recorded. With
	// e.AtMostOnce it behaves as AtMostOnce describes.
	Run(ctx context.Context, e Effect) error
}

// Do runs fn through r as effect name, at least once: a retry after its
// record was lost runs it again with the same idempotency key.
func Do(ctx context.Context, r Runner, name string, fn func(ctx context.Context, idempotencyKey string) error) error {
	return r.Run(ctx, Effect{Name: name, Fn: func(ctx context.Context, ik string) (string, error) { return "", fn(ctx, ik) }})
}

// DoResult is Do for an fn that returns a short outcome, stored as
// Record.Result.
func DoResult(ctx context.Context, r Runner, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	return r.Run(ctx, Effect{Name: name, Fn: fn})
}

// check reports an effect the ledgers cannot run.
func (e Effect) check(key webhook.Key) error {
	switch {
	case e.Name == "":
		return invalidf("empty effect name for %s", key)
	case e.Fn == nil:
		return invalidf("effect %s of %s has no function", e.Name, key)
	}
	return nil
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
	return &ledgerRunner{l: l, key: key, attempt: newAttemptID(),
		done: map[string]bool{}, intents: map[string]intent{}, locks: map[string]*sync.Mutex{}}
}

// Records returns the recorded effects of the event key, sorted by effect
// name, read consistently. Intents of at-most-once effects (AtMostOnce)
// that have no outcome are not records.
func (l *Ledger) Records(ctx context.Context, key webhook.Key) ([]Record, error) {
	recs, _, err := l.Read(ctx, key)
	return recs, err
}

// Intent is an at-most-once effect (AtMostOnce) that an attempt started
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
func (l *Ledger) Read(ctx context.Context, key webhook.Key) ([]Record, []Intent, error) {
	items, err := l.items(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	var (
		recs []Record
		open []Intent
	)
	for _, it := range items {
		effect, ik := attrString(it, "effect"), attrString(it, "idempotency_key")
		switch attrString(it, attrState) {
		case "":
			recs = append(recs, Record{Effect: effect, Key: key, IdempotencyKey: ik, Result: attrString(it, "result")})
		case stateStarted:
			started, _ := time.Parse(time.RFC3339Nano, attrString(it, attrStartedAt))
			open = append(open, Intent{Effect: effect, Key: key, IdempotencyKey: ik, Attempt: attrString(it, attrAttempt), StartedAt: started})
		}
	}
	sortRecords(recs)
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
func (l *Ledger) item(r Record, state, attempt string) map[string]types.AttributeValue {
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
func (l *Ledger) record(ctx context.Context, r Record) error {
	return l.put(ctx, r, l.item(r, "", ""), "attribute_not_exists(pk) OR attribute_exists(#state)", nil, opRecord)
}

// recordOwn writes the outcome of an at-most-once effect over this
// attempt's own intent. A condition failure means another attempt's record
// or intent is there (this attempt lost its lease): nothing to do.
func (l *Ledger) recordOwn(ctx context.Context, r Record, attempt string) error {
	return l.put(ctx, r, l.item(r, "", ""), "attribute_not_exists(pk) OR (#state = :started AND attempt = :attempt)",
		map[string]types.AttributeValue{":started": str(stateStarted), ":attempt": str(attempt)}, opRecord)
}

// intend writes this attempt's intent where there is nothing, a released
// intent, or this attempt's own (a retry of a write whose answer was
// lost). applied is false when a record or another attempt's intent is
// there.
func (l *Ledger) intend(ctx context.Context, r Record, attempt string) (applied bool, err error) {
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
func (l *Ledger) release(ctx context.Context, r Record, attempt string) error {
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
func (l *Ledger) put(ctx context.Context, r Record, item map[string]types.AttributeValue, cond string, values map[string]types.AttributeValue, op string) error {
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

type ledgerRunner struct {
	l       *Ledger
	key     webhook.Key
	attempt string // tells this runner's intents from every other's

	mu      sync.Mutex
	loaded  bool
	done    map[string]bool
	intents map[string]intent // at-most-once effects started and not finished
	locks   map[string]*sync.Mutex
}

// intent is an at-most-once effect some attempt started.
type intent struct {
	attempt string
	started time.Time
}

func (r *ledgerRunner) Run(ctx context.Context, e Effect) error {
	if err := e.check(r.key); err != nil {
		return err
	}
	if e.AtMostOnce {
		return r.atMostOnce(ctx, e.Name, e.Fn)
	}
	return r.atLeastOnce(ctx, e.Name, e.Fn)
}

// atLeastOnce runs fn unless it is recorded, and records it.
func (r *ledgerRunner) atLeastOnce(ctx context.Context, name string, fn Func) error {
	unlock, done, _, err := r.begin(ctx, name)
	defer unlock()
	if err != nil || done {
		return err
	}
	ik := IdempotencyKey(r.key, name)
	res, err := fn(ctx, ik)
	if err != nil {
		return fmt.Errorf("effect %s of %s: %w", name, r.key, err)
	}
	rec := Record{Effect: name, Key: r.key, IdempotencyKey: ik, Result: res}
	rctx, cancel := recordContext(ctx)
	defer cancel()
	if err := persist(rctx, func(ctx context.Context) error { return r.l.record(ctx, rec) }); err != nil {
		return err
	}
	r.finished(name)
	return nil
}

// atMostOnce runs fn behind an intent (AtMostOnce).
func (r *ledgerRunner) atMostOnce(ctx context.Context, name string, fn Func) error {
	unlock, done, in, err := r.begin(ctx, name)
	defer unlock()
	switch {
	case err != nil || done:
		return err
	case in.attempt != "" && in.attempt != r.attempt:
		return outcomeUnknown(r.key, name, in.started, nil)
	}
	ik := IdempotencyKey(r.key, name)
	rec := Record{Effect: name, Key: r.key, IdempotencyKey: ik}
	var applied bool
	err = persist(ctx, func(ctx context.Context) (err error) {
		applied, err = r.l.intend(ctx, rec, r.attempt)
		return err
	})
	switch {
	case err != nil:
		// The intent may be stored (a write applied whose answer was
		// lost) although fn was never called: release it, or the next
		// attempt would take the email for one that may have gone out.
		return r.unstarted(ctx, rec, err)
	case !applied:
		// Another attempt's record or intent appeared after this runner
		// read the ledger: this attempt lost its lease.
		return fmt.Errorf("effect %s of %s: another attempt started or recorded it meanwhile", name, r.key)
	}
	r.mu.Lock()
	r.intents[name] = intent{attempt: r.attempt, started: r.l.now()}
	r.mu.Unlock()
	if cerr := ctx.Err(); cerr != nil {
		// The effect's time ran out while the intent was written: fn is
		// not called, so nothing was sent.
		return r.unstarted(ctx, rec, fmt.Errorf("effect %s of %s: not started: %w", name, r.key, cerr))
	}

	res, err := fn(ctx, ik)
	rctx, cancel := recordContext(ctx)
	defer cancel()
	switch {
	case err != nil && isNotDone(err):
		if rerr := persist(rctx, func(ctx context.Context) error { return r.l.release(ctx, rec, r.attempt) }); rerr != nil {
			// The intent stays: the next attempt cannot tell and parks the event.
			return fmt.Errorf("effect %s of %s: %w (and its start could not be released: %v)", name, r.key, err, rerr)
		}
		r.mu.Lock()
		delete(r.intents, name)
		r.mu.Unlock()
		return fmt.Errorf("effect %s of %s: %w", name, r.key, err)
	case err != nil:
		return outcomeUnknown(r.key, name, time.Time{}, err)
	}
	rec.Result = res
	if err := persist(rctx, func(ctx context.Context) error { return r.l.recordOwn(ctx, rec, r.attempt) }); err != nil {
		return fmt.Errorf("effect %s of %s ran, but its outcome could not be recorded; the next attempt parks the event instead of repeating it: %w", name, r.key, err)
	}
	r.finished(name)
	return nil
}

// unstarted releases this attempt's intent for rec, which may or may not
// be stored, when fn was not called, and returns err: the next attempt
// then runs the effect. If the release fails too, the intent may stay and
// the next attempt parks the event (it cannot tell).
func (r *ledgerRunner) unstarted(ctx context.Context, rec Record, err error) error {
	rctx, cancel := recordContext(ctx)
	defer cancel()
	if rerr := persist(rctx, func(ctx context.Context) error { return r.l.release(ctx, rec, r.attempt) }); rerr != nil {
		return fmt.Errorf("%w (and its start could not be released: %v)", err, rerr)
	}
	r.mu.Lock()
	delete(r.intents, rec.Effect)
	r.mu.Unlock()
	return err
}

// finished notes that effect name is recorded.
func (r *ledgerRunner) finished(name string) {
	r.mu.Lock()
	r.done[name] = true
	delete(r.intents, name)
	r.mu.Unlock()
}

// begin takes the lock of effect name, which the caller holds until the
// effect is recorded or has failed (unlock releases it), and reports
// whether the effect is recorded and its open intent.
func (r *ledgerRunner) begin(ctx context.Context, name string) (unlock func(), done bool, in intent, err error) {
	lock := r.lock(name)
	lock.Lock()
	done, in, err = r.state(ctx, name)
	return lock.Unlock, done, in, err
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

// state reports whether effect name is recorded, and its intent if one is
// open, loading the event's ledger on first use.
func (r *ledgerRunner) state(ctx context.Context, name string) (done bool, in intent, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.loaded {
		items, err := r.l.items(ctx, r.key)
		if err != nil {
			return false, intent{}, err
		}
		r.loaded = true
		for _, it := range items {
			effect := attrString(it, "effect")
			switch attrString(it, attrState) {
			case "":
				r.done[effect] = true
			case stateStarted:
				started, _ := time.Parse(time.RFC3339Nano, attrString(it, attrStartedAt))
				r.intents[effect] = intent{attempt: attrString(it, attrAttempt), started: started}
			}
		}
	}
	return r.done[name], r.intents[name], nil
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
