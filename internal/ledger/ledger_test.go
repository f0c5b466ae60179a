package ledger

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// ledger is what the conformance suite needs of a ledger.
type ledger interface {
	For(key webhook.Key) effects.Runner
	Records(ctx context.Context, key webhook.Key) ([]effects.Record, error)
}

func TestMemoryLedger(t *testing.T) {
	runLedgerSuite(t, func(t *testing.T) ledger { return effects.NewMemoryLedger() })
}

func TestDynamoDBLedger(t *testing.T) {
	runLedgerSuite(t, func(t *testing.T) ledger {
		db, table := dynamoForTest(t)
		return New(db, table, time.Hour)
	})
}

// runLedgerSuite checks the behaviour every ledger shares.
func runLedgerSuite(t *testing.T, newLedger func(t *testing.T) ledger) {
	ctx := context.Background()
	key := webhook.NewKey("stripe", "evt_suite")

	t.Run("RunsAndRecords", func(t *testing.T) {
		l := newLedger(t)
		var gotKey string
		err := effects.Do(ctx, l.For(key), "grant-access", func(_ context.Context, ik string) error {
			gotKey = ik
			return nil
		})
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		if want := effects.IdempotencyKey(key, "grant-access"); gotKey != want {
			t.Errorf("idempotency key = %q, want %q", gotKey, want)
		}
		wantOnlyRecord(t, l, key, "grant-access", "")
	})

	t.Run("RetrySkipsRecorded", func(t *testing.T) {
		l := newLedger(t)
		calls := map[string]int{}
		fail := true
		attempt := func() error {
			r := l.For(key) // a new attempt gets a new effects.Runner
			for _, name := range []string{"a", "b", "c"} {
				err := effects.Do(ctx, r, name, func(context.Context, string) error {
					calls[name]++
					if name == "b" && fail {
						return errors.New("smtp down")
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		}
		if err := attempt(); err == nil || !strings.Contains(err.Error(), "smtp down") {
			t.Fatalf("first attempt: err = %v, want the effect's error", err)
		}
		if diff := cmp.Diff([]string{"a"}, effectNames(records(t, l, key))); diff != "" {
			t.Errorf("recorded after failure (-want +got):\n%s", diff)
		}
		fail = false
		if err := attempt(); err != nil {
			t.Fatalf("retry: %v", err)
		}
		if err := attempt(); err != nil {
			t.Fatalf("redelivery: %v", err)
		}
		if diff := cmp.Diff(map[string]int{"a": 1, "b": 2, "c": 1}, calls); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})

	t.Run("SameRunnerTwice", func(t *testing.T) {
		l := newLedger(t)
		r := l.For(key)
		n := 0
		for i := 0; i < 3; i++ {
			if err := effects.Do(ctx, r, "x", func(context.Context, string) error { n++; return nil }); err != nil {
				t.Fatalf("effects.Do #%d: %v", i, err)
			}
		}
		if n != 1 {
			t.Errorf("fn ran %d times, want 1", n)
		}
	})

	t.Run("ErrorKindKept", func(t *testing.T) {
		l := newLedger(t)
		err := effects.Do(ctx, l.For(key), "x", func(context.Context, string) error {
			return webhook.Permanent(errors.New("no such product"))
		})
		if !webhook.IsPermanent(err) {
			t.Errorf("err = %v, want permanent", err)
		}
		if got := records(t, l, key); len(got) != 0 {
			t.Errorf("Records = %v, want none after a failure", got)
		}
	})

	t.Run("EmptyName", func(t *testing.T) {
		l := newLedger(t)
		err := effects.Do(ctx, l.For(key), "", func(context.Context, string) error { return nil })
		if !isInvalid(err) {
			t.Errorf("err = %v, want an invalid effect, permanent", err)
		}
		err = l.For(key).Run(ctx, effects.Effect{Name: "x"})
		if !isInvalid(err) {
			t.Errorf("no function: err = %v, want an invalid effect, permanent", err)
		}
	})

	t.Run("Result", func(t *testing.T) {
		l := newLedger(t)
		err := effects.DoResult(ctx, l.For(key), "create-invoice", func(context.Context, string) (string, error) {
			return "in_123", nil
		})
		if err != nil {
			t.Fatalf("DoResult: %v", err)
		}
		wantOnlyRecord(t, l, key, "create-invoice", "in_123")
	})

	t.Run("EventsAreSeparate", func(t *testing.T) {
		l := newLedger(t)
		other := webhook.NewKey("stripe", "evt_other")
		n := 0
		for _, k := range []webhook.Key{key, other, key} {
			if err := effects.Do(ctx, l.For(k), "x", func(context.Context, string) error { n++; return nil }); err != nil {
				t.Fatalf("effects.Do %s: %v", k, err)
			}
		}
		if n != 2 {
			t.Errorf("fn ran %d times, want once per event (2)", n)
		}
		if got := records(t, l, webhook.NewKey("stripe", "evt_never")); len(got) != 0 {
			t.Errorf("Records of an unknown event = %v, want none", got)
		}
	})

	t.Run("ConcurrentSameRunner", func(t *testing.T) {
		l := newLedger(t)
		r := l.For(key)
		var n atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := effects.Do(ctx, r, "x", func(context.Context, string) error { n.Add(1); return nil }); err != nil {
					t.Errorf("Do: %v", err)
				}
			}()
		}
		wg.Wait()
		if n.Load() != 1 {
			t.Errorf("fn ran %d times, want 1", n.Load())
		}
	})

	t.Run("ConcurrentRunnersRecordOnce", func(t *testing.T) {
		// Runners of different attempts are not serialized by every ledger
		// (that is the inbox lease's job), but the record is written once.
		l := newLedger(t)
		var wg sync.WaitGroup
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := effects.Do(ctx, l.For(key), "x", func(context.Context, string) error { return nil }); err != nil {
					t.Errorf("Do: %v", err)
				}
			}()
		}
		wg.Wait()
		if diff := cmp.Diff([]string{"x"}, effectNames(records(t, l, key))); diff != "" {
			t.Errorf("recorded (-want +got):\n%s", diff)
		}
	})
}

func TestDynamoDBLedgerItem(t *testing.T) {
	db, table := dynamoForTest(t)
	l := New(db, table, 48*time.Hour)
	now := time.Unix(1_700_000_000, 0)
	l.now = func() time.Time { return now }
	key := webhook.NewKey("stripe", "evt_item")
	ctx := context.Background()
	if err := effects.DoResult(ctx, l.For(key), "create-invoice", func(context.Context, string) (string, error) { return "in_1", nil }); err != nil {
		t.Fatalf("DoResult: %v", err)
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &table,
		Key:            map[string]types.AttributeValue{"pk": str(string(key)), "sk": str("effect#create-invoice")},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	want := map[string]types.AttributeValue{
		"pk":              str("stripe#evt_item"),
		"sk":              str("effect#create-invoice"),
		"effect":          str("create-invoice"),
		"idempotency_key": str("hookinbox:stripe#evt_item:create-invoice"),
		"result":          str("in_1"),
		"expires_at":      &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(48*time.Hour).Unix(), 10)},
	}
	if diff := cmp.Diff(want, out.Item, attrCmp); diff != "" {
		t.Errorf("item (-want +got):\n%s", diff)
	}
}

// isInvalid reports an error of an effect no ledger can run: permanent,
// and saying so.
func isInvalid(err error) bool {
	return err != nil && webhook.IsPermanent(err) && strings.Contains(err.Error(), "invalid effect")
}

func records(t *testing.T, l ledger, key webhook.Key) []effects.Record {
	t.Helper()
	recs, err := l.Records(context.Background(), key)
	if err != nil {
		t.Fatalf("Records: %v", err)
	}
	return recs
}

// wantOnlyRecord checks that effect, with result, is the one record of key.
func wantOnlyRecord(t *testing.T, l ledger, key webhook.Key, effect, result string) {
	t.Helper()
	want := []effects.Record{{Effect: effect, Key: key, IdempotencyKey: effects.IdempotencyKey(key, effect), Result: result}}
	if diff := cmp.Diff(want, records(t, l, key)); diff != "" {
		t.Errorf("Records (-want +got):\n%s", diff)
	}
}

func effectNames(recs []effects.Record) []string {
	var names []string
	for _, r := range recs {
		names = append(names, r.Effect)
	}
	return names
}
