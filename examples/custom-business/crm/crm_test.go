package crm_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"example.com/custom-business/crm"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// fakeCRM records the requests it gets, by path and Idempotency-Key, and
// answers with status.
type fakeCRM struct {
	mu     sync.Mutex
	calls  []string          // "<path> <Idempotency-Key>"
	last   map[string]string // path → last body
	status int
}

func (f *fakeCRM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.URL.Path+" "+r.Header.Get("Idempotency-Key"))
	body, _ := io.ReadAll(r.Body)
	if f.last == nil {
		f.last = map[string]string{}
	}
	f.last[r.URL.Path] = string(body)
	if f.status != 0 {
		w.WriteHeader(f.status)
		return
	}
	_, _ = w.Write([]byte(`{"id":"crm_1"}`))
}

// Calls returns the requests so far.
func (f *fakeCRM) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// Count returns how many requests the CRM got: the side effects a test
// counts.
func (f *fakeCRM) Count() int { return len(f.Calls()) }

// memTable is a contacts table in memory.
type memTable struct {
	mu    sync.Mutex
	items map[string]map[string]types.AttributeValue
}

func (m *memTable) key(k map[string]types.AttributeValue) string {
	return k["pk"].(*types.AttributeValueMemberS).Value + "|" + k["sk"].(*types.AttributeValueMemberS).Value
}

func (m *memTable) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &dynamodb.GetItemOutput{Item: m.items[m.key(in.Key)]}, nil
}

// PutItem writes in.Item; the one condition the business writes with
// ("not there yet, or owned by :event") is checked.
func (m *memTable) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if owner, ok := in.ExpressionAttributeValues[":event"]; ok {
		if old, exists := m.items[m.key(in.Item)]; exists && old["event"].(*types.AttributeValueMemberS).Value != owner.(*types.AttributeValueMemberS).Value {
			return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
		}
	}
	m.items[m.key(in.Item)] = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

func newBusiness(t *testing.T, f *fakeCRM) (*crm.Business, *memTable) {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	table := &memTable{items: map[string]map[string]types.AttributeValue{}}
	return &crm.Business{URL: srv.URL, Client: srv.Client(), DB: table, Contacts: "contacts"}, table
}

func event(t *testing.T, provider, typ, file string) webhook.Event {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return webhook.Event{Provider: provider, ID: "evt_1CrmExample00000000000001", Type: typ, Created: time.Unix(1700000000, 0), Raw: raw}
}

func TestCheckoutOnceAndOrderFindsTheCustomer(t *testing.T) {
	f := &fakeCRM{}
	b, table := newBusiness(t, f)
	mux := b.Mux()
	ledger := effects.NewMemoryLedger()
	checkout := event(t, "stripe", "checkout.session.completed", "../testdata/checkout.session.completed.json")
	for range 2 {
		if err := mux.Handle(context.Background(), checkout, ledger.For(checkout.Key())); err != nil {
			t.Fatal(err)
		}
	}
	want := "/contacts " + effects.IdempotencyKey(checkout.Key(), crm.EffectNotify)
	if got := f.Calls(); len(got) != 1 || got[0] != want {
		t.Errorf("CRM calls = %q, want one: %q", got, want)
	}
	if len(table.items) != 1 {
		t.Errorf("contacts table holds %d items, want the checkout's customer", len(table.items))
	}

	order := event(t, "shopify", "orders/paid", "../testdata/orders_paid.json")
	order.ID = "0b6a7c1e-4a0f-4c39-9d0a-2f1d3e4c5b6a"
	if err := mux.Handle(context.Background(), order, ledger.For(order.Key())); err != nil {
		t.Fatal(err)
	}
	if got := f.Calls(); len(got) != 2 || got[1] != "/orders "+effects.IdempotencyKey("shopify-order#820982911946154508", crm.EffectOrder) {
		t.Errorf("CRM calls = %q, want the contact then the order", got)
	}
	if body := f.last["/orders"]; !contains(body, `"customer":"cus_R7xK2mQpL4vN9a"`) {
		t.Errorf("the order sent to the CRM %s, want it with the checkout's customer", body)
	}
}

func TestErrorsClassified(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		permanent bool
	}{
		{"down", http.StatusServiceUnavailable, false},
		{"throttled", http.StatusTooManyRequests, false},
		{"refused", http.StatusUnprocessableEntity, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newBusiness(t, &fakeCRM{status: tt.status})
			ev := event(t, "stripe", "checkout.session.completed", "../testdata/checkout.session.completed.json")
			err := b.Mux().Handle(context.Background(), ev, effects.NewMemoryLedger().For(ev.Key()))
			if err == nil || webhook.IsPermanent(err) != tt.permanent {
				t.Errorf("CRM %d: err = %v, want permanent=%v", tt.status, err, tt.permanent)
			}
		})
	}
}

func TestOtherEventsIgnored(t *testing.T) {
	b, _ := newBusiness(t, &fakeCRM{})
	for _, ev := range []webhook.Event{
		{Provider: "stripe", ID: "evt_1", Type: "invoice.paid", Raw: []byte(`not even JSON`)},
		{Provider: "shopify", ID: "x", Type: "orders/create", Raw: []byte(`{}`)},
		{Provider: "github", ID: "y", Type: "issues", Raw: []byte(`{}`)},
	} {
		if err := b.Mux().Handle(context.Background(), ev, effects.NewMemoryLedger().For(ev.Key())); !errors.Is(err, webhook.ErrNoHandler) {
			t.Errorf("%s %s: err = %v, want ErrNoHandler", ev.Provider, ev.Type, err)
		}
	}
}

func TestFromEnvNamesEveryMissingSetting(t *testing.T) {
	_, err := crm.FromEnv(context.Background(), awsConfig(), func(string) string { return "" })
	if err == nil || !contains(err.Error(), "CRM_URL") || !contains(err.Error(), "CONTACTS_TABLE") {
		t.Errorf("FromEnv with nothing set: %v, want an error naming CRM_URL and CONTACTS_TABLE", err)
	}
}

// A paid order reaches the CRM once whatever event brings it: its
// webhook, the reconciler's claim shopify#order-<id>-paid, and the
// captured body resent under new event ids. A pending order resent under
// the unsigned topic orders/paid sends nothing.
func TestOrderOnceWhateverEventBringsIt(t *testing.T) {
	f := &fakeCRM{}
	b, _ := newBusiness(t, f)
	mux := b.Mux()
	ledger := effects.NewMemoryLedger()
	paid := event(t, "shopify", "orders/paid", "../testdata/orders_paid.json")
	pending := paid
	pending.Raw = []byte(strings.Replace(string(paid.Raw), `"financial_status": "paid"`, `"financial_status": "pending"`, 1))
	pending.Raw = []byte(strings.Replace(string(pending.Raw), "820982911946154508", "820982911946154509", 1))
	tests := []struct {
		id string
		ev webhook.Event
	}{
		{"0b6a7c1e-4a0f-4c39-9d0a-2f1d3e4c5b6a", paid},    // the webhook
		{"order-820982911946154508-paid", paid},           // the reconciler's claim
		{"1c7b8d2f-5b1a-4d4a-8e1b-3a2e4f5d6c7b", paid},    // a resend under a new id
		{"2d8c9e3a-6c2b-4e5b-9f2c-4b3f5a6e7d8c", paid},    // and another
		{"3e9dab4b-7d3c-4f6c-8a3d-5c4a6b7f8e9d", pending}, // a pending order sent as orders/paid
	}
	for _, tt := range tests {
		ev := tt.ev
		ev.ID = tt.id
		if err := mux.Handle(context.Background(), ev, ledger.For(ev.Key())); err != nil {
			t.Fatalf("%s: %v", ev.Key(), err)
		}
	}
	want := []string{"/orders " + effects.IdempotencyKey("shopify-order#820982911946154508", crm.EffectOrder)}
	if got := f.Calls(); !slices.Equal(got, want) {
		t.Errorf("CRM calls = %q, want %q", got, want)
	}
}
