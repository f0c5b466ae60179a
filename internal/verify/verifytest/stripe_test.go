package verifytest_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	stripe "github.com/stripe/stripe-go/v76"
	stripewebhook "github.com/stripe/stripe-go/v76/webhook"
)

const (
	secret    = "whsec_test_hookinbox_current_0123456789"
	oldSecret = "whsec_test_hookinbox_previous_987654321"
)

var at = time.Date(2023, 11, 20, 13, 17, 41, 0, time.UTC)

// TestSignStripeIsStripesScheme cross-checks SignStripe against stripe-go:
// the same header as GenerateTestSignedPayload, the same signature as
// ComputeSignature, and a header ValidatePayload accepts with every secret
// it was signed with.
func TestSignStripeIsStripesScheme(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		at   time.Time
	}{
		{"event", verifytest.StripeEvent("checkout.session.completed", "evt_1", at), at},
		{"empty body", nil, at},
		{"binary body", []byte{0, 0xff, '.', ','}, at},
		{"before 1970", []byte(`{}`), time.Unix(-5, 0)},
		{"sub-second time", []byte(`{}`), at.Add(999 * time.Millisecond)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := verifytest.SignStripe(tc.body, tc.at, secret)
			want := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{
				Payload: tc.body, Secret: secret, Timestamp: tc.at,
			}).Header
			if got != want {
				t.Errorf("SignStripe() = %q, want %q (stripe-go)", got, want)
			}

			got = verifytest.SignStripe(tc.body, tc.at, oldSecret, secret)
			want = fmt.Sprintf("t=%d,v1=%s,v1=%s", tc.at.Unix(),
				hex.EncodeToString(stripewebhook.ComputeSignature(tc.at, tc.body, oldSecret)),
				hex.EncodeToString(stripewebhook.ComputeSignature(tc.at, tc.body, secret)))
			if got != want {
				t.Errorf("SignStripe(two secrets) = %q, want %q (stripe-go)", got, want)
			}
			for _, s := range []string{oldSecret, secret} {
				if err := stripewebhook.ValidatePayloadIgnoringTolerance(tc.body, got, s); err != nil {
					t.Errorf("stripe-go ValidatePayloadIgnoringTolerance(SignStripe(), %.18s...) = %v", s, err)
				}
			}
		})
	}
}

func TestSignStripeAcceptedByStripeGo(t *testing.T) {
	now := time.Now()
	body := verifytest.StripeEvent("customer.subscription.created", "evt_1", now)
	header := verifytest.SignStripe(body, now, oldSecret, secret)
	for _, s := range []string{oldSecret, secret} {
		if err := stripewebhook.ValidatePayload(body, header, s); err != nil {
			t.Errorf("stripe-go ValidatePayload(SignStripe()) = %v", err)
		}
	}
	// stripe-go's full decode path also accepts it: the event is shaped as
	// api_version 2023-10-16, the version stripe-go v76 expects.
	if _, err := stripewebhook.ConstructEvent(body, header, secret); err != nil {
		t.Errorf("stripe-go ConstructEvent(StripeEvent(), SignStripe()) = %v", err)
	}
	if err := stripewebhook.ValidatePayload(body, header, "whsec_wrong"); err == nil {
		t.Errorf("stripe-go ValidatePayload(wrong secret) = nil, want an error")
	}
	if got, want := verifytest.SignStripe(body, now), fmt.Sprintf("t=%d", now.Unix()); got != want {
		t.Errorf("SignStripe(no secret) = %q, want %q", got, want)
	}
}

// TestStripeEventDecodes decodes each event with stripe-go's own types and
// checks the fields the options set.
func TestStripeEventDecodes(t *testing.T) {
	t.Run("checkout.session.completed payment", func(t *testing.T) {
		e := decodeEvent(t, verifytest.StripeEvent("checkout.session.completed", "evt_1", at,
			verifytest.WithCustomer("cus_P2fQw8ZkLm3VxR"), verifytest.WithEmail("ann@example.com"),
			verifytest.WithMetadata("order_id", "ord_42")))
		var s stripe.CheckoutSession
		decodeObject(t, e, &s)
		check(t, "object", s.Object, "checkout.session")
		check(t, "id prefix", s.ID[:10], "cs_test_a1")
		check(t, "customer", s.Customer.ID, "cus_P2fQw8ZkLm3VxR")
		check(t, "email", s.CustomerDetails.Email, "ann@example.com")
		check(t, "mode", s.Mode, stripe.CheckoutSessionModePayment)
		check(t, "payment_status", s.PaymentStatus, stripe.CheckoutSessionPaymentStatusPaid)
		check(t, "status", s.Status, stripe.CheckoutSessionStatusComplete)
		check(t, "amount_total", s.AmountTotal, 2000)
		check(t, "currency", s.Currency, stripe.CurrencyUSD)
		check(t, "metadata", s.Metadata["order_id"], "ord_42")
		check(t, "subscription", s.Subscription == nil, true)
		check(t, "payment_intent prefix", s.PaymentIntent.ID[:3], "pi_")
	})
	t.Run("checkout.session.completed subscription", func(t *testing.T) {
		e := decodeEvent(t, verifytest.StripeEvent("checkout.session.completed", "evt_2", at,
			verifytest.WithSubscription("sub_1ODwX1LkdIwHu7ixS9hRk3Ya", "")))
		var s stripe.CheckoutSession
		decodeObject(t, e, &s)
		check(t, "mode", s.Mode, stripe.CheckoutSessionModeSubscription)
		check(t, "subscription", s.Subscription.ID, "sub_1ODwX1LkdIwHu7ixS9hRk3Ya")
		check(t, "email", s.CustomerDetails.Email, "jenny.rosen@example.com")
	})
	for _, tc := range []struct {
		typ, status, wantStatus string
	}{
		{"customer.subscription.created", "", "active"},
		{"customer.subscription.updated", "past_due", "past_due"},
		{"customer.subscription.deleted", "", "canceled"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			e := decodeEvent(t, verifytest.StripeEvent(tc.typ, "evt_3", at,
				verifytest.WithCustomer("cus_1"), verifytest.WithSubscription("sub_1", tc.status),
				verifytest.WithPrice("price_pro_monthly")))
			var s stripe.Subscription
			decodeObject(t, e, &s)
			check(t, "object", s.Object, "subscription")
			check(t, "id", s.ID, "sub_1")
			check(t, "customer", s.Customer.ID, "cus_1")
			check(t, "status", string(s.Status), tc.wantStatus)
			check(t, "items", len(s.Items.Data), 1)
			check(t, "price", s.Items.Data[0].Price.ID, "price_pro_monthly")
			check(t, "period ends after it starts", s.CurrentPeriodEnd > s.CurrentPeriodStart, true)
			check(t, "period holds the event", s.CurrentPeriodStart <= at.Unix() && at.Unix() < s.CurrentPeriodEnd, true)
			check(t, "previous_attributes", len(e.Data.PreviousAttributes) > 0, tc.typ == "customer.subscription.updated")
			if tc.wantStatus == "canceled" {
				check(t, "ended_at", s.EndedAt, at.Unix())
			}
		})
	}
	t.Run("other type", func(t *testing.T) {
		e := decodeEvent(t, verifytest.StripeEvent("invoice.paid", "evt_4", at, verifytest.WithLivemode(true)))
		var inv stripe.Invoice
		decodeObject(t, e, &inv)
		check(t, "object", inv.Object, "invoice")
		check(t, "id prefix", inv.ID[:3], "in_")
		check(t, "livemode", e.Livemode && inv.Livemode, true)
	})
}

func decodeEvent(t *testing.T, body []byte) stripe.Event {
	t.Helper()
	var e stripe.Event
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("decode event: %v", err)
	}
	if e.Object != "event" || e.APIVersion != stripe.APIVersion || e.Created != at.Unix() || e.Data == nil {
		t.Fatalf("event = {object:%q api_version:%q created:%d}, want event, %s, %d", e.Object, e.APIVersion, e.Created, stripe.APIVersion, at.Unix())
	}
	return e
}

func decodeObject(t *testing.T, e stripe.Event, v any) {
	t.Helper()
	if err := json.Unmarshal(e.Data.Raw, v); err != nil {
		t.Fatalf("decode data.object as %T: %v", v, err)
	}
}

func check[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// TestStripeEventMatchesFixtures checks that the builder writes the same
// fields as the real deliveries in ../testdata, object by object, so the
// builder cannot drift from what Stripe sends.
func TestStripeEventMatchesFixtures(t *testing.T) {
	tests := []struct {
		file string
		opts []verifytest.Option
	}{
		{"checkout.session.completed.json", nil},
		{"customer.subscription.updated.json", nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			fixture, err := os.ReadFile(filepath.Join("..", "testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			typ := strings.TrimSuffix(tc.file, ".json")
			built := verifytest.StripeEvent(typ, "evt_1", at, tc.opts...)
			var want, got any
			if err := json.Unmarshal(fixture, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(built, &got); err != nil {
				t.Fatal(err)
			}
			for _, diff := range keyDiff("", got, want) {
				t.Error(diff)
			}
			// Both are indented as Stripe delivers them.
			if !bytes.HasPrefix(built, []byte("{\n  \"id\": ")) || !bytes.HasPrefix(fixture, []byte("{\n  \"id\": ")) {
				t.Errorf("builder or fixture is not indented as Stripe delivers events")
			}
		})
	}
}

// keyDiff lists the object keys one of got and want has and the other has
// not, recursively, skipping free-form maps.
func keyDiff(path string, got, want any) []string {
	g, ok1 := got.(map[string]any)
	w, ok2 := want.(map[string]any)
	if !ok1 || !ok2 {
		ga, ok1 := got.([]any)
		wa, ok2 := want.([]any)
		if ok1 && ok2 && len(ga) > 0 && len(wa) > 0 {
			return keyDiff(path+"[0]", ga[0], wa[0])
		}
		return nil
	}
	var diffs []string
	keys := map[string]bool{}
	for k := range g {
		keys[k] = true
	}
	for k := range w {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		p := path + "." + k
		gv, inG := g[k]
		wv, inW := w[k]
		switch {
		case !inW:
			diffs = append(diffs, fmt.Sprintf("%s: built, not in the fixture", p))
		case !inG:
			diffs = append(diffs, fmt.Sprintf("%s: in the fixture, not built", p))
		case k == "metadata" || k == "previous_attributes":
		default:
			diffs = append(diffs, keyDiff(p, gv, wv)...)
		}
	}
	return diffs
}

func TestStripeEventSize(t *testing.T) {
	base := len(verifytest.StripeEvent("checkout.session.completed", "evt_1", at))
	tests := []struct {
		name string
		size int
		want int
	}{
		{"smaller than the event", 100, base},
		{"a little more", base + 100, base + 100},
		{"one full padding key", base + 600, base + 600},
		{"64 KiB", 64 << 10, 64 << 10},
		{"256 KiB, the SQS limit", 256 << 10, 256 << 10},
		{"400 KB, the DynamoDB item limit", 400_000, 400_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := verifytest.StripeEvent("checkout.session.completed", "evt_1", at, verifytest.WithSize(tc.size))
			if got := len(body); got != tc.want {
				t.Errorf("len(StripeEvent(WithSize(%d))) = %d, want %d", tc.size, got, tc.want)
			}
			var s struct {
				Data struct {
					Object stripe.CheckoutSession `json:"object"`
				} `json:"data"`
			}
			if err := json.Unmarshal(body, &s); err != nil {
				t.Fatalf("padded event does not decode: %v", err)
			}
			for k, v := range s.Data.Object.Metadata {
				if len(v) > 500 {
					t.Errorf("metadata %s is %d bytes, more than Stripe's 500", k, len(v))
				}
			}
		})
	}
}

func TestStripeEventDeterministic(t *testing.T) {
	a := verifytest.StripeEvent("customer.subscription.updated", "evt_1", at)
	b := verifytest.StripeEvent("customer.subscription.updated", "evt_1", at)
	if !bytes.Equal(a, b) {
		t.Errorf("StripeEvent() differs between calls with the same arguments")
	}
	var x, y struct {
		Data struct {
			Object struct {
				ID       string `json:"id"`
				Customer string `json:"customer"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(verifytest.StripeEvent("customer.subscription.updated", "evt_2", at), &y); err != nil {
		t.Fatal(err)
	}
	if x.Data.Object.ID == y.Data.Object.ID || x.Data.Object.Customer == y.Data.Object.Customer {
		t.Errorf("events evt_1 and evt_2 share subscription %q or customer %q", x.Data.Object.ID, x.Data.Object.Customer)
	}
}

func TestStripeEventNoHTMLEscaping(t *testing.T) {
	body := verifytest.StripeEvent("checkout.session.completed", "evt_1", at, verifytest.WithEmail("a+b<c>&d@example.com"))
	if !bytes.Contains(body, []byte(`"email": "a+b<c>&d@example.com"`)) {
		t.Errorf("email is escaped; Stripe writes <, > and & as they are")
	}
}
