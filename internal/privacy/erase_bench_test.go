package privacy_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// BenchmarkShopErasure erases a shop's events, as the processor's
// shop/redact does, on dynalite: HOOKINBOX_BENCH_SHOP_EVENTS events of
// the shop (default 100,000) among as many of another shop's, each a
// finished order with its payload inline and one effect result, indexed
// under its shop. The erasure runs in invocations of 30 s, the
// processor's timeout, each going on where the last stopped, until it is
// done. It reports the time and invocations the erasure took, and the
// write and read units per erased event that DynamoDB bills (consumed
// capacity); seeding the table is not timed. Run it once:
//
//	go test -run '^$' -bench ShopErasure -benchtime 1x -timeout 60m ./internal/privacy/
func BenchmarkShopErasure(b *testing.B) {
	n := 100_000
	if v := os.Getenv("HOOKINBOX_BENCH_SHOP_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("HOOKINBOX_BENCH_SHOP_EVENTS=%q: want a positive count", v)
		}
	}
	ctx := context.Background()
	emu := devstacktest.ForTest(b)
	for range b.N {
		table := bigStack(b).Tables["InboxTable"]
		db := emu.DynamoDB()
		hasher := privacy.NewHasher(privacy.Keys{"bench-subject-key"})
		gone, other := shopHash(b, hasher, "gone-shop.myshopify.com"), shopHash(b, hasher, "other-shop.myshopify.com")
		seedStart := time.Now()
		tpl := templateEvent(b, db, table, gone)
		seed(b, db, table, tpl, gone, "gone", n)
		seed(b, db, table, tpl, other, "other", n)
		b.Logf("seeded %d events of each shop in %s", n, time.Since(seedStart).Round(time.Second))

		m := &meteredDB{Client: db}
		store := inbox.NewDynamoDB(m, table)
		e := privacy.NewEraser(store, hasher, nil)
		req := privacy.Request{Subjects: []provider.Subject{shopify.ShopSubject("gone-shop.myshopify.com")},
			By: "shopify shop/redact shopify#bench", ID: "shopify#bench-redact"}
		b.ResetTimer()
		start, invocations := time.Now(), 0
		var rep privacy.Report
		for {
			invocations++
			ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
			var err error
			rep, err = e.Erase(ictx, req)
			cancel()
			if err == nil {
				break
			}
			if !errors.Is(err, privacy.ErrMore) {
				b.Fatal(err)
			}
		}
		took := time.Since(start)
		b.StopTimer()
		if rep.Found() != n {
			b.Fatalf("erased %d events, want %d", rep.Found(), n)
		}
		checkOtherShop(b, store)
		wcu, rcu := m.units()
		b.ReportMetric(float64(invocations), "invocations")
		b.ReportMetric(float64(n)/took.Seconds(), "events/s")
		b.ReportMetric(wcu/float64(n), "WCU/event")
		b.ReportMetric(rcu/float64(n), "RCU/event")
		b.Logf("erased %d events of one shop among %d of another in %s (%d invocations of 30 s): %.2f write units and %.2f read units an event",
			n, n, took.Round(time.Second), invocations, wcu/float64(n), rcu/float64(n))
	}
}

// bigStack is devstacktest.NewTestStack for a table too large to delete
// within its 30 s: it is given 10 minutes.
func bigStack(b *testing.B) *devstack.Stack {
	tpl, err := devstack.RootTemplate()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := devstacktest.ForTest(b).CreateStack(ctx, tpl, devstack.UniqueStackName())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := st.Delete(ctx); err != nil {
			b.Error(err)
		}
	})
	return st
}

// shopHash returns the hash a shop's events are indexed under.
func shopHash(b *testing.B, h privacy.Hasher, domain string) string {
	hs, err := h.Index(context.Background(), []provider.Subject{shopify.ShopSubject(domain)})
	if err != nil {
		b.Fatal(err)
	}
	return hs[0]
}

// templateEvent makes one finished Shopify order through the store and
// the ledger, as the pipeline would (claimed with its shop, indexed,
// DONE, one effect with a result), and returns its partition's items.
func templateEvent(b *testing.B, db *dynamodb.Client, table, hash string) []map[string]types.AttributeValue {
	ctx := context.Background()
	store := inbox.NewDynamoDB(db, table)
	ev := webhook.Event{Provider: shopify.Name, ID: "template", Type: "orders/paid", Created: time.Now(),
		Raw: []byte(`{"id":820982911946154508,"email":"jon@example.com","financial_status":"paid","customer":{"id":115310627314723954,"email":"jon@example.com","first_name":"Jon"},"line_items":[{"title":"IPod Nano - 8GB","quantity":1,"price":"199.00"}]}`)}
	it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: time.Now(), TTL: inbox.DefaultTTL, Subjects: []string{hash}})
	if err == nil {
		_, err = store.Lease(ctx, it.Key, "w1", time.Now(), time.Minute)
	}
	if err == nil {
		err = effects.DoResult(ctx, ledger.New(db, table, inbox.DefaultTTL).For(it.Key), "stock",
			func(context.Context, string) (string, error) { return "moved 1 IPod Nano", nil })
	}
	if err == nil {
		_, err = store.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Done, At: time.Now(), Indexed: true})
	}
	if err != nil {
		b.Fatal(err)
	}
	out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: string(it.Key)}}})
	if err != nil {
		b.Fatal(err)
	}
	return out.Items
}

// seed writes n copies of the template event's items under the keys
// shopify#<prefix>-<i>, each indexed under hash, 25 items a request.
func seed(b *testing.B, db *dynamodb.Client, table string, tpl []map[string]types.AttributeValue, hash, prefix string, n int) {
	items := make(chan map[string]types.AttributeValue, 1000)
	g, ctx := errgroup.WithContext(context.Background())
	for range 8 {
		g.Go(func() error {
			var batch []types.WriteRequest
			flush := func() error {
				for len(batch) > 0 {
					out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: batch}})
					if err != nil {
						return err
					}
					batch = out.UnprocessedItems[table]
				}
				return nil
			}
			for it := range items {
				if batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}); len(batch) == 25 {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			return flush()
		})
	}
	g.Go(func() error {
		defer close(items)
		for i := range n {
			key := fmt.Sprintf("shopify#%s-%07d", prefix, i)
			for _, item := range tpl {
				c := maps.Clone(item)
				c["pk"] = &types.AttributeValueMemberS{Value: key}
				select {
				case items <- c:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			items <- map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "subject:" + hash},
				"sk": &types.AttributeValueMemberS{Value: key}, "expires_at": &types.AttributeValueMemberN{Value: "4102444800"}}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// checkOtherShop fails b unless the other shop's first events keep their
// payloads.
func checkOtherShop(b *testing.B, store *inbox.DynamoDB) {
	for i := range 10 {
		if _, err := store.Payload(context.Background(), webhook.Key(fmt.Sprintf("shopify#other-%07d", i))); err != nil {
			b.Fatalf("the other shop's event %d: %v", i, err)
		}
	}
}

// meteredDB asks DynamoDB for the capacity of every request the store
// makes and adds it up.
type meteredDB struct {
	*dynamodb.Client
	mu       sync.Mutex
	wcu, rcu float64
}

func (m *meteredDB) units() (wcu, rcu float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.wcu, m.rcu
}

func (m *meteredDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := m.Client.PutItem(ctx, in, opts...)
	if err == nil {
		m.add(&m.wcu, out.ConsumedCapacity)
	}
	return out, err
}

func (m *meteredDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := m.Client.UpdateItem(ctx, in, opts...)
	if err == nil {
		m.add(&m.wcu, out.ConsumedCapacity)
	}
	return out, err
}

func (m *meteredDB) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := m.Client.Query(ctx, in, opts...)
	if err == nil {
		m.add(&m.rcu, out.ConsumedCapacity)
	}
	return out, err
}

func (m *meteredDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := m.Client.GetItem(ctx, in, opts...)
	if err == nil {
		m.add(&m.rcu, out.ConsumedCapacity)
	}
	return out, err
}

// add adds the units of c, if any, to *total.
func (m *meteredDB) add(total *float64, c *types.ConsumedCapacity) {
	if c == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	*total += aws.ToFloat64(c.CapacityUnits)
}
