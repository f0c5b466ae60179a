package gopay

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// GoPay sends no notification for some of a payment's state changes, so
// the payments last seen in a state that is not final are watched: items
// in the inbox table under one partition,
//
//	watch#gopay   payment#<id>   state, first_seen (epoch s), checked_at, expires_at
//	watch#gopay   unknown#<id>   first_missed (epoch s), misses, sweeps, expires_at
//	watch#gopay   cursor         after (the sort key the sweep reached), since,
//	                             unknown_after (the unknown id it reached)
//
// written by every fetch of a payment (watch.Watching wraps the
// processor's fetch): a state that is not final is recorded, a final one
// removes the item, and a payment GoPay does not know (404) is recorded
// as unknown, counting the 404s. The reconciler's sweep (sweeper)
// fetches the watched payments again, a budget a run, and hands a payment
// whose state changed to the intake as its notification would, so the
// processor fetches and applies the new state once; and it fetches the
// unknown ids, a smaller budget a run, each in turn (going on from the
// one the last run reached, and round again), at most unknownSweeps
// times each within unknownMaxAge of the first 404, and hands one GoPay
// knows by then to the intake (its API lagged its notification).
const (
	gopayWatchPartition = "watch#gopay"
	gopayWatchPrefix    = "payment#"
	gopayUnknownPrefix  = "unknown#"
	gopayCursor         = "cursor"
)

// How long, and how often, the sweep fetches a payment id GoPay answered
// 404 for: made-up ids cost at most this many fetches, and a payment GoPay
// knows a little later than it notifies is found within minutes.
const (
	unknownMaxAge = time.Hour
	unknownSweeps = 3
)

// watchTTL is how long a watch item lives (its expires_at, for the
// table's TTL) even when no reconciler sweeps it: the longest
// watch.MaxAge.
const watchTTL = 30 * 24 * time.Hour

// final reports whether a GoPay payment state is final: anything but
// CREATED, PAYMENT_METHOD_CHOSEN and AUTHORIZED, which GoPay may leave
// without a notification.
func final(state string) bool {
	switch state {
	case "CREATED", "PAYMENT_METHOD_CHOSEN", "AUTHORIZED":
		return false
	}
	return true
}

// gopayDB lists the DynamoDB calls of the watch list.
type gopayDB interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// fetcher returns a GoPay payment as the API serves it
// (payments).
type fetcher = func(ctx context.Context, id string) ([]byte, error)

// watch is the list of GoPay payments not final yet, in the inbox
// table. Safe for concurrent use.
type watch struct {
	DB    gopayDB
	Table string
	// MaxAge is how long a payment is watched after it was first seen not
	// final; default 7 days, at most watchTTL.
	MaxAge time.Duration
	Now    func() time.Time
}

func (w *watch) now() time.Time {
	if w.Now == nil {
		return time.Now()
	}
	return w.Now()
}

func (w *watch) maxAge() time.Duration {
	return min(cmp.Or(w.MaxAge, 7*24*time.Hour), watchTTL)
}

// Watching returns fetch, recording the state of every payment it
// fetches. A failed record fails the fetch, so the caller tries again
// rather than lose the watch.
func (w *watch) Watching(fetch fetcher) fetcher {
	return func(ctx context.Context, id string) ([]byte, error) {
		raw, err := fetch(ctx, id)
		if errors.Is(err, provider.ErrNotFound) {
			misses, rerr := w.missed(ctx, id)
			if rerr != nil {
				return nil, rerr
			}
			return nil, &provider.NotFoundError{Err: err, Count: misses}
		}
		if err != nil {
			return nil, err
		}
		if err := w.record(ctx, id, gopayState(raw)); err != nil {
			return nil, err
		}
		return raw, nil
	}
}

// record writes the payment's state: a state that is not final is kept
// (first_seen only the first time), a final one ends the watch.
func (w *watch) record(ctx context.Context, id, state string) error {
	if final(state) {
		return w.end(ctx, id)
	}
	now := w.now()
	_, err := w.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &w.Table,
		Key:                      watchKey(gopayWatchPrefix + id),
		UpdateExpression:         aws.String("SET #st = :st, checked_at = :now, first_seen = if_not_exists(first_seen, :first), expires_at = if_not_exists(expires_at, :exp)"),
		ExpressionAttributeNames: map[string]string{"#st": "state"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":st":    &types.AttributeValueMemberS{Value: state},
			":now":   &types.AttributeValueMemberS{Value: now.UTC().Format(time.RFC3339)},
			":first": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)},
			":exp":   &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(watchTTL).Unix(), 10)},
		},
	})
	if err != nil {
		return fmt.Errorf("gopay payment %s: watch it in state %s: %w", id, state, err)
	}
	return nil
}

// missed records a 404 for the payment id and returns how many it has
// had while watched as unknown.
func (w *watch) missed(ctx context.Context, id string) (int, error) {
	now := w.now()
	out, err := w.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        &w.Table,
		Key:              watchKey(gopayUnknownPrefix + id),
		UpdateExpression: aws.String("SET first_missed = if_not_exists(first_missed, :now), expires_at = if_not_exists(expires_at, :exp) ADD misses :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)},
			":exp": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(unknownMaxAge).Unix(), 10)},
			":one": &types.AttributeValueMemberN{Value: "1"},
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, fmt.Errorf("gopay payment %s: watch it as unknown: %w", id, err)
	}
	misses, _ := strconv.Atoi(attrN(out.Attributes, "misses"))
	return misses, nil
}

// forget removes an unknown id from the watch list.
func (w *watch) forget(ctx context.Context, id string) error {
	if _, err := w.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &w.Table, Key: watchKey(gopayUnknownPrefix + id)}); err != nil {
		return fmt.Errorf("gopay payment %s: end its watch as unknown: %w", id, err)
	}
	return nil
}

// list reads up to limit watch list items whose sort key meets cond, in
// which :sk stands for sk, and :from for from when given.
func (w *watch) list(ctx context.Context, cond, sk string, limit int, from ...string) ([]map[string]types.AttributeValue, error) {
	values := map[string]types.AttributeValue{
		":pk": &types.AttributeValueMemberS{Value: gopayWatchPartition},
		":sk": &types.AttributeValueMemberS{Value: sk},
	}
	if len(from) > 0 {
		values[":from"] = &types.AttributeValueMemberS{Value: from[0]}
	}
	out, err := w.DB.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &w.Table,
		KeyConditionExpression:    aws.String("pk = :pk AND " + cond),
		ExpressionAttributeValues: values,
		Limit:                     aws.Int32(int32(limit)),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}

// watchKey is the key of a watch list item.
func watchKey(sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: gopayWatchPartition},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

// end removes the payment from the watch list.
func (w *watch) end(ctx context.Context, id string) error {
	_, err := w.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &w.Table, Key: watchKey(gopayWatchPrefix + id)})
	if err != nil {
		return fmt.Errorf("gopay payment %s: end its watch: %w", id, err)
	}
	return nil
}

// gopayState returns the state of a fetched payment ("" when it has
// none; payments checks there is one).
func gopayState(raw []byte) string {
	var p struct {
		State string `json:"state"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.State
}

// sweeper is the GoPay source: each run fetches up to Budget watched
// payments again, from where the last run stopped, and hands each whose
// state changed to the intake as a notification of it. A payment still
// not final after the watch's MaxAge is dropped, logged and counted as
// skipped. Its checkpoint is when the sweep under way started: every
// payment watched before then was fetched since the sweep before.
type sweeper struct {
	watch *watch
	Fetch fetcher // without Watching: the sweep records what it handed on
	// Budget is how many payments one run fetches; default 50.
	Budget int
	// UnknownBudget is how many unknown ids one run fetches; default 20.
	UnknownBudget int
	// Inbox ends the hold of an unknown id's IGNORED claim once GoPay
	// knows the payment.
	Inbox provider.Inbox
}

// Sweep implements provider.Sweeper.
func (g *sweeper) Sweep(ctx context.Context, now time.Time, accept func(context.Context, webhook.Event) error, late func() bool) (provider.Swept, error) {
	w := g.watch
	budget := cmp.Or(g.Budget, 50)
	cur, err := g.cursor(ctx, now)
	if err != nil {
		return provider.Swept{}, err
	}
	after, since := cur.after, cur.since
	items, err := w.list(ctx, "sk > :sk", after, budget)
	if err != nil {
		return provider.Swept{Since: since}, fmt.Errorf("list watched gopay payments: %w", err)
	}
	sw := provider.Swept{Since: since}
	var errs []error
	stopped, ended := false, len(items) < budget
	for _, item := range items {
		sk := attrS(item, "sk")
		if !strings.HasPrefix(sk, gopayWatchPrefix) {
			ended = true // the unknown ids sort after the payments
			break
		}
		if late() {
			stopped = true
			errs = append(errs, errors.New("stopped: the function is about to time out; the next run goes on from there"))
			break
		}
		if err := g.one(ctx, now, accept, strings.TrimPrefix(sk, gopayWatchPrefix), item, &sw); err != nil {
			errs = append(errs, err)
		}
		after = sk
	}
	unknownAfter := cur.unknownAfter
	if !stopped {
		var err error
		if unknownAfter, err = g.unknown(ctx, now, accept, late, unknownAfter, &sw); err != nil {
			errs = append(errs, err)
		}
	}
	if !stopped && ended {
		// Every watched payment was fetched: the next sweep starts now.
		after, since = gopayWatchPrefix, now
	}
	if err := g.saveCursor(ctx, sweepCursor{after: after, since: since, unknownAfter: unknownAfter}, now); err != nil {
		errs = append(errs, err)
	}
	sw.Since = since
	return sw, errors.Join(errs...)
}

// one fetches one watched payment and hands a changed state on.
func (g *sweeper) one(ctx context.Context, now time.Time, accept func(context.Context, webhook.Event) error, id string, item map[string]types.AttributeValue, sw *provider.Swept) error {
	key := webhook.NewKey(Name, id)
	was := attrS(item, "state")
	first, _ := strconv.ParseInt(attrN(item, "first_seen"), 10, 64)
	if age := now.Sub(time.Unix(first, 0)); age > g.watch.maxAge() {
		sw.Skipped++
		note := fmt.Sprintf("still %s after %s: no longer fetched", was, age.Round(time.Hour))
		sw.Events = append(sw.Events, provider.Line{Key: key.String(), Type: Notification, Outcome: provider.Skipped, Note: note})
		return g.watch.end(ctx, id)
	}
	sw.Fetched++
	raw, err := g.Fetch(ctx, id)
	if errors.Is(err, provider.ErrNotFound) {
		// GoPay does not know the payment (any more): nothing to wait for.
		sw.Events = append(sw.Events, provider.Line{Key: key.String(), Type: Notification, Outcome: provider.Skipped, Note: "GoPay does not know this payment: no longer fetched"})
		sw.Skipped++
		return g.watch.end(ctx, id)
	}
	if err != nil {
		reason := err.Error()
		sw.Events = append(sw.Events, provider.Line{Key: key.String(), Type: Notification, Outcome: provider.Failed, Note: reason})
		return fmt.Errorf("fetch gopay payment %s: %s", id, reason)
	}
	state := gopayState(raw)
	if state != was {
		// Changed without a notification: notify as GoPay would have. The
		// processor fetches the payment again and applies the new state.
		ev := webhook.Event{Provider: Name, ID: id, Type: Notification, Created: now,
			Raw: []byte(`{"id":` + id + `}`), IDOnly: true}
		if err := accept(ctx, ev); errors.Is(err, webhook.ErrBusy) {
			// Its last notification is being fetched right now: that fetch
			// or the next sweep sees the new state.
			sw.Events = append(sw.Events, provider.Line{Key: key.String(), Type: ev.Type, Outcome: provider.Failed, Note: "being fetched now; the next sweep looks again"})
			return nil
		} else if err != nil {
			reason := err.Error()
			sw.Events = append(sw.Events, provider.Line{Key: key.String(), Type: ev.Type, Outcome: provider.Failed, Note: reason})
			return fmt.Errorf("claim %s: %s", key, reason) // the watch keeps the old state: the next run tries again
		}
		sw.Missed++
		sw.Events = append(sw.Events, provider.Line{Key: key.String(), Type: ev.Type, Outcome: provider.Claimed,
			Note: "state " + was + " → " + state + " without a notification"})
	}
	return g.watch.record(ctx, id, state)
}

// unknown fetches up to UnknownBudget ids GoPay answered 404 for, and
// hands each GoPay knows now to the intake, ending the hold of its
// IGNORED claim first. It takes them in turn: those after after (the
// sort key the last run reached), then from the first, and returns the
// sort key this run reached; so however many ids are made up, each is
// fetched again within as many runs as there are budgets in the list.
// An id is fetched at most unknownSweeps times, within unknownMaxAge of
// its first 404; made-up ids are dropped quietly (no line, nothing
// counted: they raise no alarm).
func (g *sweeper) unknown(ctx context.Context, now time.Time, accept func(context.Context, webhook.Event) error, late func() bool, after string, sw *provider.Swept) (string, error) {
	budget := cmp.Or(g.UnknownBudget, 20)
	if !strings.HasPrefix(after, gopayUnknownPrefix) {
		after = gopayUnknownPrefix
	}
	// The unknown ids sort last in the partition: nothing follows them.
	items, err := g.watch.list(ctx, "sk > :sk", after, budget)
	if err == nil && len(items) < budget && after != gopayUnknownPrefix {
		var first []map[string]types.AttributeValue
		first, err = g.watch.list(ctx, "sk BETWEEN :from AND :sk", after, budget-len(items), gopayUnknownPrefix)
		items = append(items, first...)
	}
	if err != nil {
		return after, fmt.Errorf("list unknown gopay payments: %w", err)
	}
	var errs []error
	for _, item := range items {
		if late() {
			break
		}
		after = attrS(item, "sk")
		id := strings.TrimPrefix(after, gopayUnknownPrefix)
		if err := g.unknownOne(ctx, now, accept, id, item, sw); err != nil {
			errs = append(errs, err)
		}
	}
	return after, errors.Join(errs...)
}

// unknownOne fetches one unknown id again.
func (g *sweeper) unknownOne(ctx context.Context, now time.Time, accept func(context.Context, webhook.Event) error, id string, item map[string]types.AttributeValue, sw *provider.Swept) error {
	first, _ := strconv.ParseInt(attrN(item, "first_missed"), 10, 64)
	sweeps, _ := strconv.Atoi(attrN(item, "sweeps"))
	if now.Sub(time.Unix(first, 0)) > unknownMaxAge || sweeps >= unknownSweeps {
		return g.watch.forget(ctx, id)
	}
	key := webhook.NewKey(Name, id)
	sw.Fetched++
	raw, err := g.Fetch(ctx, id)
	if errors.Is(err, provider.ErrNotFound) {
		if sweeps+1 >= unknownSweeps {
			return g.watch.forget(ctx, id)
		}
		return g.watch.swept(ctx, id)
	}
	if err != nil {
		reason := err.Error()
		sw.Events = append(sw.Events, provider.Line{Key: key.String(), Type: Notification, Outcome: provider.Failed, Note: reason})
		return fmt.Errorf("fetch gopay payment %s: %s", id, reason)
	}
	// GoPay knows it now. An IGNORED claim is let through; any other
	// status means a later notification claimed it since.
	if free, err := g.Inbox.EndHold(ctx, key); err != nil {
		return fmt.Errorf("gopay payment %s: %w", id, err)
	} else if !free {
		return g.watch.forget(ctx, id)
	}
	ev := webhook.Event{Provider: Name, ID: id, Type: Notification, Created: now,
		Raw: []byte(`{"id":` + id + `}`), IDOnly: true}
	if err := accept(ctx, ev); err != nil {
		reason := err.Error()
		sw.Events = append(sw.Events, provider.Line{Key: key.String(), Type: ev.Type, Outcome: provider.Failed, Note: reason})
		return fmt.Errorf("claim %s: %s", key, reason) // still watched: the next run tries again
	}
	sw.Missed++
	sw.Events = append(sw.Events, provider.Line{Key: key.String(), Type: ev.Type, Outcome: provider.Claimed,
		Note: "GoPay did not know it when it notified; now " + gopayState(raw)})
	return g.watch.forget(ctx, id)
}

func attrS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func attrN(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		return v.Value
	}
	return ""
}

// swept counts one more sweep of an unknown id that GoPay still does not know.
func (w *watch) swept(ctx context.Context, id string) error {
	_, err := w.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        &w.Table,
		Key:              watchKey(gopayUnknownPrefix + id),
		UpdateExpression: aws.String("ADD sweeps :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": &types.AttributeValueMemberN{Value: "1"},
		},
	})
	if err != nil {
		return fmt.Errorf("gopay payment %s: count its sweep: %w", id, err)
	}
	return nil
}
