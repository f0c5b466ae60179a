package ledger

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

var errCall = errors.New("call failed")

// TestAtMostOnce is the at-most-once part of the ledger suite, on both
// ledgers.
func TestAtMostOnce(t *testing.T) {
	ledgers := map[string]func(t *testing.T) ledger{
		"memory":   func(*testing.T) ledger { return effects.NewMemoryLedger() },
		"dynamodb": func(t *testing.T) ledger { db, table := dynamoForTest(t); return New(db, table, time.Hour) },
	}
	ctx := context.Background()
	key := webhook.NewKey("stripe", "evt_atmostonce")
	for name, newLedger := range ledgers {
		t.Run(name, func(t *testing.T) {
			t.Run("RunsOnceAndRecords", func(t *testing.T) {
				l := newLedger(t)
				n := 0
				for i := 0; i < 2; i++ {
					err := effects.AtMostOnce(ctx, l.For(key), "send", func(_ context.Context, ik string) (string, error) { n++; return "msg-1", nil })
					if err != nil {
						t.Fatalf("effects.AtMostOnce %d: %v", i, err)
					}
				}
				if n != 1 {
					t.Errorf("fn ran %d times, want 1", n)
				}
				wantOnlyRecord(t, l, key, "send", "msg-1")
			})
			t.Run("NotDoneIsRunAgain", func(t *testing.T) {
				l := newLedger(t)
				err := effects.AtMostOnce(ctx, l.For(key), "send", func(context.Context, string) (string, error) { return "", effects.NotDone(errCall) })
				if !errors.Is(err, errCall) || errors.Is(err, effects.ErrOutcomeUnknown) || webhook.IsPermanent(err) {
					t.Fatalf("err = %v, want a transient errCall", err)
				}
				n := 0
				if err := effects.AtMostOnce(ctx, l.For(key), "send", func(context.Context, string) (string, error) { n++; return "", nil }); err != nil || n != 1 {
					t.Errorf("retry: err = %v, fn ran %d times; want nil, 1", err, n)
				}
			})
			t.Run("PermanentNotDoneStaysPermanent", func(t *testing.T) {
				l := newLedger(t)
				err := effects.AtMostOnce(ctx, l.For(key), "send", func(context.Context, string) (string, error) {
					return "", effects.NotDone(webhook.Permanent(errCall))
				})
				if !webhook.IsPermanent(err) || errors.Is(err, effects.ErrOutcomeUnknown) {
					t.Errorf("err = %v, want permanent, not ErrOutcomeUnknown", err)
				}
			})
			t.Run("MaybeDoneIsNotRepeated", func(t *testing.T) {
				l := newLedger(t)
				err := effects.AtMostOnce(ctx, l.For(key), "send", func(context.Context, string) (string, error) { return "", errCall })
				if !errors.Is(err, effects.ErrOutcomeUnknown) || !errors.Is(err, errCall) || !webhook.IsPermanent(err) {
					t.Fatalf("err = %v, want a permanent effects.ErrOutcomeUnknown with errCall", err)
				}
				n := 0
				err = effects.AtMostOnce(ctx, l.For(key), "send", func(context.Context, string) (string, error) { n++; return "", nil })
				if !errors.Is(err, effects.ErrOutcomeUnknown) || !webhook.IsPermanent(err) || n != 0 {
					t.Errorf("retry: err = %v, fn ran %d times; want a permanent effects.ErrOutcomeUnknown, 0", err, n)
				}
				if got := records(t, l, key); len(got) != 0 {
					t.Errorf("Records = %v, want none (an intent is no record)", got)
				}
			})
			t.Run("SameRunnerConcurrently", func(t *testing.T) {
				l := newLedger(t)
				r := l.For(key)
				var mu sync.Mutex
				n := 0
				var wg sync.WaitGroup
				for i := 0; i < 8; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						err := effects.AtMostOnce(ctx, r, "send", func(context.Context, string) (string, error) { mu.Lock(); n++; mu.Unlock(); return "", nil })
						if err != nil {
							t.Errorf("AtMostOnce: %v", err)
						}
					}()
				}
				wg.Wait()
				if n != 1 {
					t.Errorf("fn ran %d times, want 1", n)
				}
			})
		})
	}
}

// putFaults fails PutItem calls chosen by fail; lost means the write is
// applied before the error is returned (its answer lost on the way).
type putFaults struct {
	testDynamoDB
	fail func(in *dynamodb.PutItemInput) (failNow, lost bool)
}

func (f putFaults) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	failNow, lost := f.fail(in)
	if !failNow {
		return f.testDynamoDB.PutItem(ctx, in, opts...)
	}
	if lost {
		if _, err := f.testDynamoDB.PutItem(ctx, in, opts...); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("injected: i/o timeout")
}

// isIntent reports whether in writes an intent (an item with a state).
func isIntent(in *dynamodb.PutItemInput) bool {
	s, ok := in.Item[attrState].(*types.AttributeValueMemberS)
	return ok && s.Value == stateStarted
}

// TestAtMostOnceUnderWriteFaults covers the ledger writes around an
// at-most-once call on DynamoDB: each is retried until it is written, and
// the call is made once.
func TestAtMostOnceUnderWriteFaults(t *testing.T) {
	key := webhook.NewKey("stripe", "evt_faults")
	tests := []struct {
		name string
		// fail is asked for every PutItem, with how many were made before.
		fail func(in *dynamodb.PutItemInput, n int) (failNow, lost bool)
	}{
		{"intent answer lost twice", func(in *dynamodb.PutItemInput, n int) (bool, bool) { return isIntent(in) && n < 2, true }},
		{"intent refused twice", func(in *dynamodb.PutItemInput, n int) (bool, bool) { return isIntent(in) && n < 2, false }},
		{"outcome refused three times", func(in *dynamodb.PutItemInput, n int) (bool, bool) { return !isIntent(in) && n < 4, false }},
		{"outcome answer lost", func(in *dynamodb.PutItemInput, n int) (bool, bool) { return !isIntent(in) && n < 2, true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, table := dynamoForTest(t)
			var mu sync.Mutex
			puts := 0
			l := New(putFaults{db, func(in *dynamodb.PutItemInput) (bool, bool) {
				mu.Lock()
				defer mu.Unlock()
				puts++
				return tt.fail(in, puts-1)
			}}, table, time.Hour)
			n := 0
			err := effects.AtMostOnce(context.Background(), l.For(key), "send", func(context.Context, string) (string, error) { n++; return "msg", nil })
			if err != nil || n != 1 {
				t.Fatalf("err = %v, fn ran %d times; want nil, 1", err, n)
			}
			if err := effects.AtMostOnce(context.Background(), l.For(key), "send", func(context.Context, string) (string, error) { n++; return "", nil }); err != nil || n != 1 {
				t.Errorf("second attempt: err = %v, fn ran %d times in all; want nil, 1", err, n)
			}
			if diff := cmp.Diff([]string{"send"}, effectNames(records(t, l, key))); diff != "" {
				t.Errorf("recorded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecordOutlivesTheEffectsContext: the record of an effect that has
// run is written until the record deadline, although the context the
// runner was given is cancelled meanwhile.
func TestRecordOutlivesTheEffectsContext(t *testing.T) {
	db, table := dynamoForTest(t)
	key := webhook.NewKey("stripe", "evt_recorddeadline")
	var cancel context.CancelFunc
	fails := 0
	l := New(putFaults{db, func(in *dynamodb.PutItemInput) (bool, bool) {
		if isIntent(in) {
			return false, false
		}
		cancel() // the effect's context ends while the record is being written
		fails++
		return fails <= 2, false
	}}, table, time.Hour)
	for _, name := range []string{"plain", "at-most-once"} {
		var ctx context.Context
		ctx, cancel = context.WithCancel(WithRecordDeadline(context.Background(), time.Now().Add(10*time.Second)))
		fails = 0
		var err error
		if name == "plain" {
			err = effects.Do(ctx, l.For(key), name, func(context.Context, string) error { return nil })
		} else {
			err = effects.AtMostOnce(ctx, l.For(key), name, func(context.Context, string) (string, error) { return "", nil })
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		cancel()
	}
	if diff := cmp.Diff([]string{"at-most-once", "plain"}, effectNames(records(t, l, key))); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}
