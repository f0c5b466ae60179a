package effects

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/webhook"
)

func TestAddDelta(t *testing.T) {
	ctx := context.Background()
	const target = "stock#sku_1"

	t.Run("SameEventFiveTimes", func(t *testing.T) {
		db, table := dynamoForTest(t)
		key := webhook.NewKey("stripe", "evt_1")
		applied := 0
		for i := 0; i < 5; i++ {
			ok, err := AddDelta(ctx, db, table, target, key, -3)
			if err != nil {
				t.Fatalf("AddDelta #%d: %v", i, err)
			}
			if ok {
				applied++
			}
		}
		if applied != 1 {
			t.Errorf("applied %d times, want 1", applied)
		}
		assertBalance(t, db, table, target, -3)
	})

	t.Run("SameEventConcurrently", func(t *testing.T) {
		db, table := dynamoForTest(t)
		key := webhook.NewKey("stripe", "evt_1")
		var applied atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 5; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := AddDelta(ctx, db, table, target, key, -3)
				if err != nil {
					t.Errorf("AddDelta: %v", err)
				}
				if ok {
					applied.Add(1)
				}
			}()
		}
		wg.Wait()
		if applied.Load() != 1 {
			t.Errorf("applied %d times, want 1", applied.Load())
		}
		assertBalance(t, db, table, target, -3)
	})

	t.Run("ThreeEventsSum", func(t *testing.T) {
		db, table := dynamoForTest(t)
		for i, amount := range []int64{10, -3, -2} {
			key := webhook.NewKey("stripe", fmt.Sprintf("evt_%d", i))
			for range 2 { // each delivered twice
				if _, err := AddDelta(ctx, db, table, target, key, amount); err != nil {
					t.Fatalf("AddDelta %s: %v", key, err)
				}
			}
		}
		// Another target's deltas do not count.
		if _, err := AddDelta(ctx, db, table, "stock#sku_2", "stripe#evt_9", 100); err != nil {
			t.Fatalf("AddDelta: %v", err)
		}
		assertBalance(t, db, table, target, 5)
	})

	t.Run("Paginated", func(t *testing.T) {
		// Deltas padded to ~50 KB push the Query over its 1 MB page.
		db, table := dynamoForTest(t)
		const n = 30
		for i := 0; i < n; i++ {
			item := map[string]types.AttributeValue{
				"pk":     str(target),
				"sk":     str(fmt.Sprintf("delta#stripe#evt_%03d", i)),
				"amount": &types.AttributeValueMemberN{Value: "1"},
				"pad":    str(strings.Repeat("x", 50_000)),
			}
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item}); err != nil {
				t.Fatalf("PutItem: %v", err)
			}
		}
		pages := &countingQuerier{querier: db}
		assertBalance(t, pages, table, target, n)
		if pages.n < 2 {
			t.Errorf("Balance read %d page(s), want several", pages.n)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		db, table := dynamoForTest(t)
		assertBalance(t, db, table, target, 0)
	})

	t.Run("Invalid", func(t *testing.T) {
		_, err := AddDelta(ctx, nil, "t", "", "stripe#evt_1", 1)
		if !isInvalid(err) {
			t.Errorf("err = %v, want errInvalid", err)
		}
	})
}

func assertBalance(t *testing.T, db querier, table, target string, want int64) {
	t.Helper()
	got, err := Balance(context.Background(), db, table, target)
	if err != nil {
		t.Fatalf("Balance: %v", err)
	}
	if got != want {
		t.Errorf("Balance(%s) = %d, want %d", target, got, want)
	}
}

func isInvalid(err error) bool { return errors.Is(err, errInvalid) && webhook.IsPermanent(err) }

type countingQuerier struct {
	querier
	n int
}

func (q *countingQuerier) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	q.n++
	return q.querier.Query(ctx, in, opts...)
}
