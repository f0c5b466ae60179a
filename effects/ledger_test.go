package effects

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

	"github.com/hookinbox/hookinbox/webhook"
)

// ledger is what the conformance suite needs of a ledger.
type ledger interface {
	For(key webhook.Key) Runner
	Records(ctx context.Context, key webhook.Key) ([]Record, error)
}

func TestMemoryLedger(t *testing.T) {
	runLedgerSuite(t, func(t *testing.T) ledger { return NewMemoryLedger() })
}

func TestDynamoDBLedger(t *testing.T) {
	runLedgerSuite(t, func(t *testing.T) ledger {
		db, table := dynamoForTest(t)
		return NewLedger(db, table, time.Hour)
	})
}

// runLedgerSuite checks the behaviour every ledger shares.
func runLedgerSuite(t *testing.T, newLedger func(t *testing.T) ledger) {
	ctx := context.Background()
	key := webhook.NewKey("stripe", "evt_suite")

	t.Run("RunsAndRecords", func(t *testing.T) {
		l := newLedger(t)
		var gotKey string
		err := Do(ctx, l.For(key), "grant-access", func(_ context.Context, ik string) error {
			gotKey = ik
			return nil
		})
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		if want := IdempotencyKey(key, "grant-access"); gotKey != want {
			t.Errorf("idempotency key = %q, want %q", gotKey, want)
		}
		wantOnlyRecord(t, l, key, "grant-access", "")
	})

	t.Run("RetrySkipsRecorded", func(t *testing.T) {
		l := newLedger(t)
		calls := map[string]int{}
		fail := true
		attempt := func() error {
			r := l.For(key) // a new attempt gets a new Runner
			for _, name := range []string{"a", "b", "c"} {
				err := Do(ctx, r, name, func(context.Context, string) error {
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
			if err := Do(ctx, r, "x", func(context.Context, string) error { n++; return nil }); err != nil {
				t.Fatalf("Do #%d: %v", i, err)
			}
		}
		if n != 1 {
			t.Errorf("fn ran %d times, want 1", n)
		}
	})

	t.Run("ErrorKindKept", func(t *testing.T) {
		l := newLedger(t)
		err := Do(ctx, l.For(key), "x", func(context.Context, string) error {
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
		err := Do(ctx, l.For(key), "", func(context.Context, string) error { return nil })
		if !errors.Is(err, ErrInvalid) || !webhook.IsPermanent(err) {
			t.Errorf("err = %v, want ErrInvalid, permanent", err)
		}
		err = With(l.For(key), func(_ string, next Func) Func { return next }).Run(ctx, Effect{Name: "x"})
		if !errors.Is(err, ErrInvalid) || !webhook.IsPermanent(err) {
			t.Errorf("no function: err = %v, want ErrInvalid, permanent", err)
		}
	})

	t.Run("Result", func(t *testing.T) {
		l := newLedger(t)
		err := DoResult(ctx, l.For(key), "create-invoice", func(context.Context, string) (string, error) {
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
			if err := Do(ctx, l.For(k), "x", func(context.Context, string) error { n++; return nil }); err != nil {
				t.Fatalf("Do %s: %v", k, err)
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
				if err := Do(ctx, r, "x", func(context.Context, string) error { n.Add(1); return nil }); err != nil {
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
				if err := Do(ctx, l.For(key), "x", func(context.Context, string) error { return nil }); err != nil {
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
	l := NewLedger(db, table, 48*time.Hour)
	now := time.Unix(1_700_000_000, 0)
	l.now = func() time.Time { return now }
	key := webhook.NewKey("stripe", "evt_item")
	ctx := context.Background()
	if err := DoResult(ctx, l.For(key), "create-invoice", func(context.Context, string) (string, error) { return "in_1", nil }); err != nil {
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

func TestIdempotencyKey(t *testing.T) {
	long := webhook.NewKey("stripe", "evt_"+strings.Repeat("x", 250))
	tests := []struct {
		name   string
		key    webhook.Key
		effect string
		want   string
	}{
		{"Readable", "stripe#evt_123", "welcome-email", "hookinbox:stripe#evt_123:welcome-email"},
		{"HashedWhenLong", long, "grant-access", "hookinbox:sha256:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := IdempotencyKey(tt.key, tt.effect)
			if !strings.HasPrefix(got, tt.want) || (tt.want == "hookinbox:sha256:" && len(got) != len(tt.want)+64) {
				t.Errorf("IdempotencyKey = %q, want %q...", got, tt.want)
			}
			if len(got) > MaxIdempotencyKeyLen {
				t.Errorf("len = %d, more than %d", len(got), MaxIdempotencyKeyLen)
			}
			if again := IdempotencyKey(tt.key, tt.effect); again != got {
				t.Errorf("not deterministic: %q then %q", got, again)
			}
		})
	}
	if IdempotencyKey(long, "a") == IdempotencyKey(long, "b") {
		t.Error("hashed keys of different effects are equal")
	}
}

func records(t *testing.T, l ledger, key webhook.Key) []Record {
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
	want := []Record{{Effect: effect, Key: key, IdempotencyKey: IdempotencyKey(key, effect), Result: result}}
	if diff := cmp.Diff(want, records(t, l, key)); diff != "" {
		t.Errorf("Records (-want +got):\n%s", diff)
	}
}

func effectNames(recs []Record) []string {
	var names []string
	for _, r := range recs {
		names = append(names, r.Effect)
	}
	return names
}
