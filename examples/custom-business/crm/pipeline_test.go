package crm_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"example.com/custom-business/crm"
	"example.com/custom-business/warehouse"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/hookinboxtest"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// pipeline runs this module's template.yaml on the local emulators with
// the business build builds, against a fake CRM.
func pipeline(t *testing.T, build processorfn.BusinessBuilder) (*hookinboxtest.Pipeline, *fakeCRM) {
	f := &fakeCRM{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return hookinboxtest.New(t, hookinboxtest.Options{
		Business: build, Parameters: map[string]string{"CrmUrl": srv.URL},
		// This module's own provider's sender; its functions' mains add the provider.
		Providers: []sample.Sender{warehouse.Sender()},
	}), f
}

// TestPipeline runs hookinbox's receiver → SQS → processor on the local
// emulators with this module's business and template: 20 checkouts and
// 5 paid orders, each delivered twice in shuffled order, reach the CRM
// once each, the customers are in the contacts table, and all end DONE.
func TestPipeline(t *testing.T) {
	p, f := pipeline(t, crm.FromEnv)
	var evs []hookinboxtest.Event
	for range 20 {
		evs = append(evs, p.Sample(t, "stripe", "checkout.session.completed"))
	}
	for range 5 {
		evs = append(evs, p.Sample(t, "shopify", "orders/paid"))
	}
	var keys []webhook.Key
	for _, ev := range evs {
		keys = append(keys, ev.Key())
	}
	deliveries := append(append([]hookinboxtest.Event{}, evs...), evs...)
	rand.Shuffle(len(deliveries), func(i, j int) { deliveries[i], deliveries[j] = deliveries[j], deliveries[i] })
	accepted := 0
	for _, ev := range deliveries {
		if p.Deliver(t, ev) == "accepted" {
			accepted++
		}
	}
	if accepted != len(evs) {
		t.Errorf("%d deliveries accepted, want %d (one per event)", accepted, len(evs))
	}
	p.ProcessUntil(t, time.Minute, func() bool { return f.Count() >= len(evs) && p.AllFinished(t, keys) })
	for _, k := range keys {
		if got := p.Status(t, k); got != "DONE" {
			t.Errorf("%s is %s, want DONE", k, got)
		}
	}
	seen := map[string]int{}
	for _, c := range f.Calls() {
		seen[c]++
	}
	if f.Count() != len(evs) || len(seen) != len(evs) {
		t.Errorf("the CRM got %d calls with %d distinct keys, want %d of each", f.Count(), len(seen), len(evs))
	}
	// The fixture's customer email is the same in every checkout; the
	// contacts table holds it once, with one of the checkouts' customers.
	out, err := p.DynamoDB().GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(p.Table(t, "ContactsTable")), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "email#jenny.rosen@example.com"}, "sk": &types.AttributeValueMemberS{Value: "contact"}},
	})
	if err != nil || !strings.HasPrefix(attr(out.Item, "customer"), "cus_") {
		t.Errorf("contacts table: %v, %v; want the checkout's customer", out, err)
	}
}

// TestWarehouseShipmentsReachTheCRMOnce: this module's own provider,
// added as the functions' mains add it, is signed by hookinboxtest as the
// warehouse signs, verified by the receiver, and handled by the business:
// each shipment delivered twice reaches the CRM once.
func TestWarehouseShipmentsReachTheCRMOnce(t *testing.T) {
	p, f := pipeline(t, crm.FromEnv)
	var keys []webhook.Key
	for range 3 {
		ev := p.Sample(t, warehouse.Name, "shipment.dispatched") // testdata/warehouse/, a fresh id each
		if got := p.Deliver(t, ev); got != "accepted" {
			t.Fatalf("%s: %s, want accepted", ev.Key(), got)
		}
		if got := p.Deliver(t, ev); got != "duplicate" {
			t.Fatalf("%s again: %s, want duplicate", ev.Key(), got)
		}
		keys = append(keys, ev.Key())
	}
	p.ProcessUntil(t, time.Minute, func() bool { return p.AllFinished(t, keys) })
	shipments := 0
	for _, c := range f.Calls() {
		if strings.HasPrefix(c, "/shipments ") {
			shipments++
		}
	}
	for _, k := range keys {
		if got := p.Status(t, k); got != "DONE" {
			t.Errorf("%s is %s, want DONE", k, got)
		}
	}
	if shipments != len(keys) {
		t.Errorf("the CRM got %d shipments, want %d", shipments, len(keys))
	}
}

func attr(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// TestEffectsOnceWhereverAnAttemptFails: hookinboxtest.CheckOnce fails
// the processing of a checkout and of an order at every point between
// their effects, and loses DynamoDB's answer to every write, and the CRM
// still gets each request once: snapshot and thin checkouts, and orders.
func TestEffectsOnceWhereverAnAttemptFails(t *testing.T) {
	p, f := pipeline(t, crm.FromEnv)
	p.CheckOnce(t, func(t testing.TB) hookinboxtest.Event { return p.Sample(t, "stripe", "checkout.session.completed") }, f.Count)
	p.CheckOnce(t, func(t testing.TB) hookinboxtest.Event { return p.Sample(t, "shopify", "orders/paid") }, f.Count)
	// A thin event: the processor fetches the session, the business sees
	// the same checkout.
	p.CheckOnce(t, func(t testing.TB) hookinboxtest.Event {
		return p.Sample(t, "stripe", "checkout.session.completed", hookinboxtest.Variant("thin"))
	}, f.Count)
	// A paid order's orders/paid is keyed by the order, as the
	// reconciler's claim of it is (shopify#order-<id>-paid): the order
	// delivered again under another event id is its duplicate, and adds
	// no CRM order.
	order := p.Sample(t, "shopify", "orders/paid")
	if got := p.Deliver(t, order); got != "accepted" {
		t.Fatalf("%s: %s, want accepted", order.Key(), got)
	}
	p.ProcessUntil(t, time.Minute, func() bool { return p.AllFinished(t, []webhook.Key{order.Key()}) })
	before := f.Count()
	again := order
	again.ID = "b7e3a1c2-0000-4000-8000-000000000001" // another X-Shopify-Event-Id
	if got := p.Deliver(t, again); got != "duplicate" {
		t.Fatalf("%s under another event id: %s, want duplicate", order.Key(), got)
	}
	if got := f.Count() - before; got != 0 {
		t.Errorf("the order delivered again made %d CRM calls, want 0", got)
	}
}

// notifiesFirst is the business written wrong: it tells the CRM about the
// customer straight away, outside the effect ledger, and then runs the
// real business. Every duplicate delivery and shuffle test passes with
// it (the receiver removes duplicates before the business sees them);
// CheckOnce must catch it.
type notifiesFirst struct{ b *crm.Business }

func (n notifiesFirst) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	if ev.Provider == "stripe" {
		if err := n.b.Post(ctx, "/contacts", crm.Contact{Event: string(ev.Key())}, "", &struct{}{}); err != nil {
			return err
		}
	}
	return n.b.Mux().Handle(ctx, ev, fx)
}

func TestCheckOnceCatchesACRMCallOutsideTheLedger(t *testing.T) {
	p, f := pipeline(t, func(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
		if _, err := crm.FromEnv(ctx, cfg, getenv); err != nil {
			return nil, err
		}
		return notifiesFirst{b: &crm.Business{URL: getenv("CRM_URL"), Client: http.DefaultClient, DB: processorfn.DynamoDB(ctx, cfg), Contacts: getenv("CONTACTS_TABLE")}}, nil
	})
	errs := recorded(t, func(tb testing.TB) {
		p.CheckOnce(tb, func(tb testing.TB) hookinboxtest.Event { return p.Sample(tb, "stripe", "checkout.session.completed") }, f.Count)
	})
	twice := 0
	for _, e := range errs {
		t.Log(e)
		if strings.Contains(e, "more than once") {
			twice++
		}
	}
	// The call runs again after every failure that makes the business
	// run again: before, between and after its two effects. (A lost
	// DynamoDB answer only makes the SDK send that write again.)
	if twice < 3 {
		t.Errorf("CheckOnce reported %d side effects that happened more than once, want at least 3 (a failure before, between and after the effects)", twice)
	}
}

// recorder is a testing.TB that records failures instead of failing the
// test, so a test can assert what a check reports. Fatal ends the
// goroutine recorded runs the check in.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) FailNow()          { r.Fatalf("FailNow") }
func (r *recorder) Fail()             { r.Errorf("Fail") }

// recorded runs check with a recorder in a goroutine of its own and
// returns what it reported.
func recorded(t *testing.T, check func(testing.TB)) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.errors
}
