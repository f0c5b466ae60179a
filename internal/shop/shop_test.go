package shop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/shop/shopevents"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

var t0 = time.Date(2024, 5, 29, 12, 0, 0, 0, time.UTC)

// harnesses are the two ways the scenarios run: fast, against fakes, and
// against DynamoDB plus SES and Stripe API servers.
var harnesses = []struct {
	name string
	new  func(t *testing.T) *harness
}{
	{"Fakes", newFakeHarness},
	{"DynamoDB", newDynamoHarness},
}

func TestCheckout(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			t.Run("Once", func(t *testing.T) { testCheckoutOnce(t, h.new(t)) })
			t.Run("Twice", func(t *testing.T) { testCheckoutTwice(t, h.new(t)) })
			t.Run("InvoiceFailsThenRetry", func(t *testing.T) { testInvoiceFailsThenRetry(t, h.new(t)) })
			t.Run("Rejected", func(t *testing.T) { testCheckoutRejected(t, h.new) })
			t.Run("DelayedPayment", func(t *testing.T) { testCheckoutDelayedPayment(t, h.new(t)) })
			t.Run("KeyRefused", func(t *testing.T) { testCheckoutKeyRefused(t, h.new(t)) })
			t.Run("ThinAndSnapshotClaims", func(t *testing.T) { testCheckoutTwoClaims(t, h.new(t)) })
		})
	}
}

func testCheckoutOnce(t *testing.T, h *harness) {
	ev := checkoutEvent("evt_1Checkout0000000000001", t0)
	handle(t, h, ev)
	st := state(t, h)
	cs := sessionID(t, ev)
	want := State{
		Access: []Access{{Holder: "cus_Shop000000001", Active: true, Sources: []string{"purchase#" + cs}}},
		Entitlements: []Entitlement{{
			Holder: "cus_Shop000000001", Customer: "cus_Shop000000001", Source: "purchase", SourceID: cs, Active: true,
			Version: effects.Version{At: t0.Unix(), EventID: ev.ID},
		}},
		Subscriptions: []Subscription{},
		Emails:        []Email{{Event: ev.Key(), Session: cs, To: "jenny.rosen@example.com", Template: "welcome"}},
		Invoices:      []Invoice{{Event: ev.Key(), Session: cs, InvoiceID: invoicesCreated(h.invoiceCalls())[0], Customer: "cus_Shop000000001"}},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("State (-want +got):\n%s", diff)
	}
	wantMail := []sentMail{{To: "jenny.rosen@example.com", IdempotencyTag: TagValue(effects.IdempotencyKey(ev.Key(), "welcome-email"))}}
	if diff := cmp.Diff(wantMail, h.mails()); diff != "" {
		t.Errorf("mails (-want +got):\n%s", diff)
	}
	calls := h.invoiceCalls()
	if len(calls) != 1 {
		t.Fatalf("%d invoice calls, want 1", len(calls))
	}
	if got, want := calls[0].IdempotencyKey, effects.IdempotencyKey(checkoutKey(cs), "create-invoice"); got != want {
		t.Errorf("invoice Idempotency-Key = %q, want %q", got, want)
	}
	if got, want := calls[0].Event, "stripe-checkout#"+cs; got != want {
		t.Errorf("invoice metadata hookinbox_event = %q, want %q", got, want)
	}
}

func testCheckoutTwice(t *testing.T, h *harness) {
	ev := checkoutEvent("evt_1Checkout0000000000002", t0)
	handle(t, h, ev)
	handle(t, h, ev)
	if got := len(h.mails()); got != 1 {
		t.Errorf("sent %d emails, want 1", got)
	}
	if got := h.invoiceCalls(); len(got) != 1 {
		t.Errorf("invoice calls = %v, want 1", got)
	}
	st := state(t, h)
	if len(st.Entitlements) != 1 || len(st.Emails) != 1 || len(st.Invoices) != 1 {
		t.Errorf("State = %+v, want 1 entitlement, 1 email, 1 invoice", st)
	}
}

func testInvoiceFailsThenRetry(t *testing.T, h *harness) {
	ev := checkoutEvent("evt_1Checkout0000000000003", t0)
	h.failNextInvoice(500)
	err := h.shop.Handle(context.Background(), ev, h.ledger.For(ev.Key()))
	if err == nil || webhook.IsPermanent(err) {
		t.Fatalf("Handle with Stripe failing 500: err = %v, want a transient error", err)
	}
	handle(t, h, ev) // the retry
	if got := len(h.mails()); got != 1 {
		t.Errorf("sent %d emails, want 1: the retry must skip the recorded email", got)
	}
	calls := h.invoiceCalls()
	want := effects.IdempotencyKey(checkoutKey(sessionID(t, ev)), "create-invoice")
	if len(calls) != 2 || calls[0].IdempotencyKey != want || calls[1].IdempotencyKey != want {
		t.Errorf("invoice calls = %+v, want 2 with Idempotency-Key %q", calls, want)
	}
	if got := invoicesCreated(calls); len(got) != 1 {
		t.Errorf("invoices created = %v, want 1", got)
	}
	if st := state(t, h); len(st.Invoices) != 1 || len(st.Entitlements) != 1 {
		t.Errorf("State = %+v, want 1 entitlement and 1 invoice", st)
	}
}

// testCheckoutKeyRefused: Stripe refusing the key (a rolled or restricted
// key) is retried, not parked.
func testCheckoutKeyRefused(t *testing.T, h *harness) {
	for i, status := range []int{401, 403} {
		ev := checkoutEvent(fmt.Sprintf("evt_1KeyRefused00000000000%d", i), t0)
		h.failNextInvoice(status)
		err := h.shop.Handle(context.Background(), ev, h.ledger.For(ev.Key()))
		if err == nil || webhook.IsPermanent(err) {
			t.Errorf("Stripe answering %d: err = %v, want transient", status, err)
		}
		handle(t, h, ev) // the retry, with the key fixed
	}
	if got := invoicesCreated(h.invoiceCalls()); len(got) != 2 {
		t.Errorf("invoices = %v, want 2", got)
	}
}

// A replay days after the first attempt, when Stripe has forgotten the
// Idempotency-Key: the invoice the first attempt created (its answer lost
// on the way back) is found by its metadata, not created again.
func TestInvoiceReplayAfterIdempotencyWindow(t *testing.T) {
	h := newDynamoHarness(t)
	ev := checkoutEvent("evt_1Replay000000000000001", t0)
	billing := h.shop.billing
	h.shop.billing = answerLost{billing}
	err := h.shop.Handle(context.Background(), ev, h.ledger.For(ev.Key()))
	if err == nil || webhook.IsPermanent(err) {
		t.Fatalf("first attempt with the answer lost: err = %v, want transient", err)
	}
	h.shop.billing = billing
	if got := h.stripe.Invoices(); len(got) != 1 {
		t.Fatalf("invoices after the first attempt = %v, want the one Stripe created", got)
	}
	h.stripe.ForgetIdempotencyKeys() // 24 hours and more later
	handle(t, h, ev)
	handle(t, h, ev)
	got := h.stripe.Invoices()
	if len(got) != 1 {
		t.Fatalf("invoices after the replay = %v, want still one", got)
	}
	if st := state(t, h); len(st.Invoices) != 1 || st.Invoices[0].InvoiceID != got[0] {
		t.Errorf("recorded invoices = %+v, want %s", st.Invoices, got[0])
	}
}

// answerLost is a biller whose invoices are created but whose answers never
// arrive: a timeout after Stripe did the work, or a worker that died before
// recording it.
type answerLost struct{ biller }

func (b answerLost) CreateInvoice(ctx context.Context, req invoiceRequest) (string, error) {
	if _, err := b.biller.CreateInvoice(ctx, req); err != nil {
		return "", err
	}
	return "", errors.New("create invoice: context deadline exceeded")
}

func testCheckoutRejected(t *testing.T, newHarness func(t *testing.T) *harness) {
	noEmail := checkoutEvent("evt_1Checkout0000000000004", t0)
	noEmail.Raw = verifytest.StripeEvent(noEmail.Type, noEmail.ID, t0, verifytest.WithCustomer("cus_Shop000000001"), verifytest.WithEmail(" "))
	noEmail.Raw = []byte(replaceOnce(t, string(noEmail.Raw), `"email": " "`, `"email": null`))
	malformed := checkoutEvent("evt_1Checkout0000000000005", t0)
	malformed.Raw = malformed.Raw[:len(malformed.Raw)/2]
	notASession := subscriptionEvent(shopevents.SubscriptionCreated, "evt_1Checkout0000000000006", t0, "active")
	notASession.Type = shopevents.CheckoutCompleted
	noCreated := checkoutEvent("evt_1Checkout0000000000007", t0)
	noCreated.Created = time.Time{}

	tests := []struct {
		name string
		ev   webhook.Event
		fail int // injected Stripe failure
	}{
		{"NoEmail", noEmail, 0},
		{"Malformed", malformed, 0},
		{"NotACheckoutSession", notASession, 0},
		{"NoCreatedTime", noCreated, 0},
		{"Stripe400", checkoutEvent("evt_1Checkout0000000000008", t0), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.fail != 0 {
				h.failNextInvoice(tt.fail)
			}
			err := h.shop.Handle(context.Background(), tt.ev, h.ledger.For(tt.ev.Key()))
			if !webhook.IsPermanent(err) {
				t.Fatalf("Handle: err = %v, want permanent", err)
			}
			t.Logf("Handle: %v", err)
			if tt.fail == 0 {
				// A mapping gap is found before the first effect.
				if st := state(t, h); len(st.Entitlements)+len(st.Emails)+len(st.Invoices) != 0 || len(h.mails()) != 0 {
					t.Errorf("effects ran for an unmappable event: %+v, mails %v", st, h.mails())
				}
			}
		})
	}
}

// subscriptionHarness is a harness whose Stripe holds sub_Shop000000001 of
// cus_Shop000000001 in status, as it is after the events a test delivers.
func subscriptionHarness(t *testing.T, newHarness func(*testing.T) *harness, status string) *harness {
	t.Helper()
	h := newHarness(t)
	h.setSubscription("sub_Shop000000001", "cus_Shop000000001", status)
	// Reads in one test never share a millisecond, so their versions
	// order them as their times do.
	var tick int64
	h.shop.now = func() time.Time { tick++; return t0.Add(time.Duration(tick) * time.Millisecond) }
	return h
}

// wantCanceled checks that the shop holds sub_Shop000000001 canceled and
// its customer without access.
func wantCanceled(t *testing.T, h *harness) {
	t.Helper()
	st := state(t, h)
	if len(st.Subscriptions) != 1 || st.Subscriptions[0].Status != "canceled" {
		t.Errorf("subscriptions = %+v, want sub_Shop000000001 canceled", st.Subscriptions)
	}
	want := []Access{{Holder: "cus_Shop000000001", Sources: []string{}}}
	if diff := cmp.Diff(want, st.Access); diff != "" {
		t.Errorf("access (-want +got):\n%s", diff)
	}
}

func TestSubscriptionOrder(t *testing.T) {
	created := subscriptionEvent(shopevents.SubscriptionCreated, "evt_1Sub00000000000000000001", t0, "active")
	updated := subscriptionEvent(shopevents.SubscriptionUpdated, "evt_1Sub00000000000000000002", t0.Add(time.Minute), "past_due")
	deleted := subscriptionEvent(shopevents.SubscriptionDeleted, "evt_1Sub00000000000000000003", t0.Add(2*time.Minute), "canceled")
	orders := []struct {
		name   string
		events []webhook.Event
	}{
		{"InOrder", []webhook.Event{created, updated, deleted}},
		{"Reversed", []webhook.Event{deleted, updated, created}},
		{"DeletedFirst", []webhook.Event{deleted, created, updated}},
		{"Redelivered", []webhook.Event{updated, deleted, created, updated, deleted}},
	}
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			for _, o := range orders {
				t.Run(o.name, func(t *testing.T) {
					hh := subscriptionHarness(t, h.new, "canceled")
					for _, ev := range o.events {
						handle(t, hh, ev)
					}
					wantCanceled(t, hh)
				})
			}
		})
	}
}

// Two events about one subscription in the same second: the one whose ID
// sorts last carries the older status. The record ends in the status
// Stripe holds, in either delivery order.
func TestSubscriptionSameSecond(t *testing.T) {
	older := subscriptionEvent(shopevents.SubscriptionUpdated, "evt_1SameSecondZZZZZZZZZZZZ", t0, "active")
	newer := subscriptionEvent(shopevents.SubscriptionDeleted, "evt_1SameSecondAAAAAAAAAAAA", t0, "canceled")
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			for _, order := range [][]webhook.Event{{older, newer}, {newer, older}} {
				hh := subscriptionHarness(t, h.new, "canceled")
				for _, ev := range order {
					handle(t, hh, ev)
				}
				st := state(t, hh)
				if len(st.Subscriptions) != 1 || st.Subscriptions[0].Status != "canceled" || st.Access[0].Active {
					t.Errorf("order %s, %s: subscriptions %+v, access %+v; want canceled, no access",
						order[0].ID, order[1].ID, st.Subscriptions, st.Access)
				}
			}
		})
	}
}

func TestSubscriptionAccess(t *testing.T) {
	tests := []struct {
		typ, status string
		want        bool
	}{
		{shopevents.SubscriptionCreated, "active", true},
		{shopevents.SubscriptionCreated, "trialing", true},
		{shopevents.SubscriptionUpdated, "past_due", true},
		{shopevents.SubscriptionCreated, "incomplete", false},
		{shopevents.SubscriptionUpdated, "unpaid", false},
		{shopevents.SubscriptionUpdated, "paused", false},
		{shopevents.SubscriptionUpdated, "canceled", false},
		{shopevents.SubscriptionDeleted, "canceled", false},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"/"+tt.status, func(t *testing.T) {
			h := subscriptionHarness(t, newFakeHarness, tt.status)
			handle(t, h, subscriptionEvent(tt.typ, "evt_1Access000000000000001", t0, tt.status))
			st := state(t, h)
			if len(st.Entitlements) != 1 || st.Entitlements[0].Active != tt.want {
				t.Errorf("entitlements = %+v, want one with active %t", st.Entitlements, tt.want)
			}
			got, err := h.shop.access(context.Background(), "cus_Shop000000001")
			if err != nil || got != tt.want {
				t.Errorf("Access = %t, %v; want %t", got, err, tt.want)
			}
		})
	}
}

// A customer with two subscriptions and a one-time purchase keeps access
// until every one of them has ended: cancelling one subscription takes
// away only what it gave.
func TestAccessIsTheUnionOfSources(t *testing.T) {
	const cus = "cus_Shop000000001"
	subEvent := func(typ, id, sub, status string, at time.Time) webhook.Event {
		return webhook.Event{Provider: "stripe", ID: id, Type: typ, Created: at,
			Raw: verifytest.StripeEvent(typ, id, at, verifytest.WithCustomer(cus), verifytest.WithSubscription(sub, status))}
	}
	for _, hn := range harnesses {
		t.Run(hn.name, func(t *testing.T) {
			h := subscriptionHarness(t, hn.new, "active")
			h.setSubscription("sub_Shop00000000A", cus, "active")
			h.setSubscription("sub_Shop00000000B", cus, "active")
			access := func() bool {
				t.Helper()
				got, err := h.shop.access(context.Background(), cus)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			handle(t, h, subEvent(shopevents.SubscriptionCreated, "evt_1Union000000000000001", "sub_Shop00000000A", "active", t0))
			handle(t, h, subEvent(shopevents.SubscriptionCreated, "evt_1Union000000000000002", "sub_Shop00000000B", "active", t0))
			purchase := checkoutEvent("evt_1Union000000000000003", t0)
			handle(t, h, purchase)

			h.setSubscription("sub_Shop00000000A", cus, "canceled")
			handle(t, h, subEvent(shopevents.SubscriptionDeleted, "evt_1Union000000000000004", "sub_Shop00000000A", "canceled", t0.Add(time.Hour)))
			if !access() {
				t.Fatal("cancelling subscription A took away the access of B and of the purchase")
			}
			h.setSubscription("sub_Shop00000000B", cus, "canceled")
			handle(t, h, subEvent(shopevents.SubscriptionDeleted, "evt_1Union000000000000005", "sub_Shop00000000B", "canceled", t0.Add(2*time.Hour)))
			if !access() {
				t.Fatal("cancelling both subscriptions took away the access of the purchase")
			}
			st := state(t, h)
			want := []Access{{Holder: cus, Active: true, Sources: []string{"purchase#" + sessionID(t, purchase)}}}
			if diff := cmp.Diff(want, st.Access); diff != "" {
				t.Errorf("access (-want +got):\n%s", diff)
			}
			if len(st.Entitlements) != 3 {
				t.Errorf("entitlements = %+v, want 3 (A, B, the purchase)", st.Entitlements)
			}
		})
	}
}

// A subscription checkout grants what the subscription gives, not a
// purchase of its own: cancelling the subscription ends the access.
func TestSubscriptionCheckout(t *testing.T) {
	for _, hn := range harnesses {
		t.Run(hn.name, func(t *testing.T) {
			h := subscriptionHarness(t, hn.new, "active")
			ev := webhook.Event{Provider: "stripe", ID: "evt_1SubCheckout00000000001", Type: shopevents.CheckoutCompleted, Created: t0,
				Raw: verifytest.StripeEvent(shopevents.CheckoutCompleted, "evt_1SubCheckout00000000001", t0,
					verifytest.WithCustomer("cus_Shop000000001"), verifytest.WithSubscription("sub_Shop000000001", ""))}
			handle(t, h, ev)
			st := state(t, h)
			want := []Access{{Holder: "cus_Shop000000001", Active: true, Sources: []string{"subscription#sub_Shop000000001"}}}
			if diff := cmp.Diff(want, st.Access); diff != "" {
				t.Errorf("access after the checkout (-want +got):\n%s", diff)
			}
			h.setSubscription("sub_Shop000000001", "cus_Shop000000001", "canceled")
			handle(t, h, subscriptionEvent(shopevents.SubscriptionDeleted, "evt_1SubCheckout00000000002", t0.Add(time.Hour), "canceled"))
			if got, _ := h.shop.access(context.Background(), "cus_Shop000000001"); got {
				t.Error("access outlived the cancelled subscription its checkout started")
			}
		})
	}
}

// A guest checkout (no customer) is fulfilled for the address given at
// checkout: access and the welcome email, no invoice (Stripe invoices
// need a customer).
func TestGuestCheckout(t *testing.T) {
	for _, hn := range harnesses {
		t.Run(hn.name, func(t *testing.T) {
			h := hn.new(t)
			ev := fixture(t, "checkout.session.completed.guest.json", "checkout.session.completed")
			handle(t, h, ev)
			handle(t, h, ev)
			var cs checkoutSession
			if err := parseObject(ev, "checkout.session", &cs); err != nil {
				t.Fatal(err)
			}
			holder := guestHolder(" " + strings.ToUpper(cs.email()) + " ")
			if !strings.HasPrefix(holder, "guest:") || strings.Contains(holder, "@") {
				t.Errorf("guestHolder = %q, want guest: and a hash, not the address", holder)
			}
			st := state(t, h)
			want := []Entitlement{{Holder: holder, Email: cs.email(), Source: "purchase", SourceID: cs.ID, Active: true,
				Version: effects.Version{At: ev.Created.Unix(), EventID: ev.ID}}}
			if diff := cmp.Diff(want, st.Entitlements); diff != "" {
				t.Errorf("entitlements (-want +got):\n%s", diff)
			}
			if got, err := h.shop.access(context.Background(), holder); !got || err != nil {
				t.Errorf("Access(%s) = %t, %v; want true", holder, got, err)
			}
			if len(h.mails()) != 1 || h.mails()[0].To != cs.email() || len(st.Emails) != 1 {
				t.Errorf("mails = %+v, recorded %+v; want one welcome email to the guest", h.mails(), st.Emails)
			}
			if len(h.invoiceCalls()) != 0 || len(st.Invoices) != 0 {
				t.Errorf("invoice calls %+v for a guest, want none", h.invoiceCalls())
			}
		})
	}
}

// A one-time purchase and a later cancelled subscription: the purchase's
// access stays, in any order.
func TestCheckoutThenSubscriptionDeleted(t *testing.T) {
	checkout := checkoutEvent("evt_1Mixed000000000000000001", t0)
	deleted := subscriptionEvent(shopevents.SubscriptionDeleted, "evt_1Mixed000000000000000002", t0.Add(time.Hour), "canceled")
	for _, order := range [][]webhook.Event{{checkout, deleted}, {deleted, checkout}} {
		h := subscriptionHarness(t, newFakeHarness, "canceled")
		for _, ev := range order {
			handle(t, h, ev)
		}
		st := state(t, h)
		if len(st.Access) != 1 || !st.Access[0].Active || len(st.Access[0].Sources) != 1 || !strings.HasPrefix(st.Access[0].Sources[0], "purchase#") {
			t.Errorf("order %s, %s: access = %+v, want active from the purchase only", order[0].ID, order[1].ID, st.Access)
		}
	}
}

func TestHandleNoHandler(t *testing.T) {
	other := checkoutEvent("evt_1Other0000000000000001", t0)
	other.Provider = "github"
	tests := []struct {
		name string
		ev   webhook.Event
	}{
		{"UnknownType", webhook.Event{Provider: "stripe", ID: "evt_1Unknown00000000000001", Type: "invoice.paid", Created: t0,
			Raw: verifytest.StripeEvent("invoice.paid", "evt_1Unknown00000000000001", t0)}},
		{"OtherProvider", other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHarness(t)
			err := h.shop.Handle(context.Background(), tt.ev, h.ledger.For(tt.ev.Key()))
			if !errors.Is(err, webhook.ErrNoHandler) || webhook.IsPermanent(err) {
				t.Errorf("err = %v, want ErrNoHandler", err)
			}
		})
	}
}

func TestCheckoutExpandedCustomer(t *testing.T) {
	h := newFakeHarness(t)
	handle(t, h, fixture(t, "checkout.session.completed.expanded.json", "checkout.session.completed"))
	st := state(t, h)
	if len(st.Entitlements) != 1 || st.Entitlements[0].Customer != "cus_Expanded0001" {
		t.Errorf("entitlements = %+v, want one for cus_Expanded0001", st.Entitlements)
	}
}

// handle runs ev through the shop with a fresh Runner, as one processing
// attempt does, and fails the test on error.
func handle(t *testing.T, h *harness, ev webhook.Event) {
	t.Helper()
	if err := h.shop.Handle(context.Background(), ev, h.ledger.For(ev.Key())); err != nil {
		t.Fatalf("Handle %s %s: %v", ev.Type, ev.ID, err)
	}
}

func state(t *testing.T, h *harness) State {
	t.Helper()
	st, err := h.shop.State(context.Background())
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	return st
}

func checkoutEvent(id string, at time.Time) webhook.Event {
	return webhook.Event{Provider: "stripe", ID: id, Type: shopevents.CheckoutCompleted, Created: at,
		Raw: verifytest.StripeEvent(shopevents.CheckoutCompleted, id, at, verifytest.WithCustomer("cus_Shop000000001"))}
}

func subscriptionEvent(typ, id string, at time.Time, status string) webhook.Event {
	return webhook.Event{Provider: "stripe", ID: id, Type: typ, Created: at,
		Raw: verifytest.StripeEvent(typ, id, at, verifytest.WithCustomer("cus_Shop000000001"), verifytest.WithSubscription("sub_Shop000000001", status))}
}

// fixture loads a Stripe event from testdata.
func fixture(t *testing.T, name, typ string) webhook.Event {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		ID      string `json:"id"`
		Created int64  `json:"created"`
	}
	if err := jsonUnmarshal(raw, &head); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return webhook.Event{Provider: "stripe", ID: head.ID, Type: typ, Created: time.Unix(head.Created, 0), Raw: raw}
}

func sessionID(t *testing.T, ev webhook.Event) string {
	t.Helper()
	var cs checkoutSession
	if err := parseObject(ev, "checkout.session", &cs); err != nil {
		t.Fatal(err)
	}
	return cs.ID
}

// testCheckoutDelayedPayment: a session paid by a delayed method completes
// "unpaid" and is fulfilled, once, when its payment succeeds.
func testCheckoutDelayedPayment(t *testing.T, h *harness) {
	at := t0
	completed := webhook.Event{Provider: "stripe", ID: "evt_1Delayed00000000000001", Type: shopevents.CheckoutCompleted, Created: at,
		Raw: verifytest.StripeEvent(shopevents.CheckoutCompleted, "evt_1Delayed00000000000001", at,
			verifytest.WithCustomer("cus_Shop000000001"), verifytest.WithPaymentStatus("unpaid"))}
	handle(t, h, completed)
	if st := state(t, h); len(st.Entitlements)+len(st.Emails)+len(st.Invoices) != 0 {
		t.Fatalf("an unpaid checkout was fulfilled: %+v", st)
	}
	if len(h.mails()) != 0 || len(h.invoiceCalls()) != 0 {
		t.Fatalf("an unpaid checkout sent %d emails and %d invoice calls", len(h.mails()), len(h.invoiceCalls()))
	}
	paid := webhook.Event{Provider: "stripe", ID: "evt_1Delayed00000000000002", Type: shopevents.CheckoutAsyncPaid, Created: at.Add(time.Hour),
		Raw: verifytest.StripeEvent(shopevents.CheckoutAsyncPaid, "evt_1Delayed00000000000002", at.Add(time.Hour),
			verifytest.WithCustomer("cus_Shop000000001"))}
	handle(t, h, paid)
	handle(t, h, paid) // delivered twice
	st := state(t, h)
	if len(st.Entitlements) != 1 || !st.Entitlements[0].Active || len(st.Emails) != 1 || len(st.Invoices) != 1 {
		t.Errorf("after the payment succeeded: %+v; want one active entitlement, one email, one invoice", st)
	}
	if len(h.mails()) != 1 || len(invoicesCreated(h.invoiceCalls())) != 1 {
		t.Errorf("%d emails sent, %d invoices created; want 1 each", len(h.mails()), len(invoicesCreated(h.invoiceCalls())))
	}
}

// The ledger records what each write really did, so `hookinbox inspect`
// can tell an applied write from one skipped as older.
func TestEffectResults(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			hh := h.new(t)
			newer := checkoutEvent("evt_1Results000000000000001", t0.Add(time.Minute))
			// The same session, told by an older event (another ID, an
			// earlier created): its grant-access write is skipped.
			older := newer
			older.ID, older.Created = "evt_1Results000000000000000", t0
			older.Raw = bytes.ReplaceAll(newer.Raw, []byte(newer.ID), []byte(older.ID))
			handle(t, hh, newer)
			handle(t, hh, older)
			for _, c := range []struct {
				ev   webhook.Event
				want string
			}{{newer, "applied"}, {older, "skipped: older than stored"}} {
				recs, err := hh.ledger.Records(context.Background(), c.ev.Key())
				if err != nil {
					t.Fatal(err)
				}
				got := "no record"
				for _, r := range recs {
					if r.Effect == effectGrantAccess {
						got = r.Result
					}
				}
				if got != c.want {
					t.Errorf("%s: grant-access result %q, want %q", c.ev.ID, got, c.want)
				}
			}
		})
	}
}

// Two syncs of one subscription at once: the first to start reads
// "active", then Stripe cancels it, and the second reads "canceled" and
// writes first. The first read's answer arrives last; it is older and must
// not win.
func TestSubscriptionSlowReadLoses(t *testing.T) {
	first := subscriptionEvent(shopevents.SubscriptionUpdated, "evt_1SlowRead0000000000001", t0, "active")
	second := subscriptionEvent(shopevents.SubscriptionDeleted, "evt_1SlowRead0000000000002", t0.Add(time.Second), "canceled")
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			hh := subscriptionHarness(t, h.new, "active")
			var tick atomic.Int64
			hh.shop.now = func() time.Time { return t0.Add(time.Duration(tick.Add(1)) * time.Millisecond) }
			slow := &slowRead{biller: hh.shop.billing, read: make(chan struct{}), release: make(chan struct{})}
			hh.shop.billing = slow
			done := make(chan error, 1)
			go func() { done <- hh.shop.Handle(context.Background(), first, hh.ledger.For(first.Key())) }()
			<-slow.read // the first sync has read "active"; its answer is on the way
			hh.setSubscription("sub_Shop000000001", "cus_Shop000000001", "canceled")
			handle(t, hh, second)
			close(slow.release)
			if err := <-done; err != nil {
				t.Fatalf("Handle %s: %v", first.ID, err)
			}
			wantCanceled(t, hh)
		})
	}
}

// slowRead is a biller whose first subscription read holds its answer:
// it signals read once Stripe answered, then waits for release.
type slowRead struct {
	biller
	started       atomic.Bool
	read, release chan struct{}
}

func (b *slowRead) Subscription(ctx context.Context, id string) (subscriptionState, error) {
	st, err := b.biller.Subscription(ctx, id)
	if b.started.CompareAndSwap(false, true) {
		close(b.read)
		<-b.release
	}
	return st, err
}

// testCheckoutTwoClaims: one checkout reaches the shop as two events under
// two keys, as with a thin destination beside the reconciler: the thin
// event claimed under its own id (it named no snapshot_event) and the
// snapshot event the reconciler listed. The session gets one email and
// one invoice, whichever runs first.
func testCheckoutTwoClaims(t *testing.T, h *harness) {
	const session = "cs_test_TwoClaims0000000001"
	for _, order := range [][2]string{{"evt_1TwoClaimsSnapshot00001", "evt_test_61TwoClaimsThin00001"}, {"evt_test_61TwoClaimsThin00002", "evt_1TwoClaimsSnapshot00002"}} {
		before := len(h.mails())
		for _, id := range order {
			ev := checkoutEvent(id, t0)
			ev.Raw = verifytest.StripeEvent(ev.Type, id, t0, verifytest.WithCustomer("cus_Shop000000001"), verifytest.WithSession(session+order[0][len(order[0])-1:]))
			handle(t, h, ev)
			handle(t, h, ev) // and each delivered again
		}
		if got := len(h.mails()) - before; got != 1 {
			t.Errorf("%s then %s: sent %d emails, want 1", order[0], order[1], got)
		}
	}
	if got := invoicesCreated(h.invoiceCalls()); len(got) != 2 {
		t.Errorf("invoices created = %v, want 1 a session", got)
	}
	st := state(t, h)
	if len(st.Emails) != 2 || len(st.Invoices) != 2 {
		t.Errorf("State emails %+v, invoices %+v; want 1 of each a session", st.Emails, st.Invoices)
	}
}
