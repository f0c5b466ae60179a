package verifytest_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	stripeprovider "github.com/hookinbox/hookinbox/internal/providers/stripe"

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
			got := stripeprovider.SignatureHeader(tc.body, tc.at, secret)
			want := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{
				Payload: tc.body, Secret: secret, Timestamp: tc.at,
			}).Header
			if got != want {
				t.Errorf("SignStripe() = %q, want %q (stripe-go)", got, want)
			}

			got = stripeprovider.SignatureHeader(tc.body, tc.at, oldSecret, secret)
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
	header := stripeprovider.SignatureHeader(body, now, oldSecret, secret)
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
	if got, want := stripeprovider.SignatureHeader(body, now), fmt.Sprintf("t=%d", now.Unix()); got != want {
		t.Errorf("SignStripe(no secret) = %q, want %q", got, want)
	}
}

// TestStripeEventDecodes decodes each patched fixture with stripe-go's own
// types and checks the fields the options set.
func TestStripeEventDecodes(t *testing.T) {
	t.Run("checkout.session.completed payment", func(t *testing.T) {
		e := decodeEvent(t, verifytest.StripeEvent("checkout.session.completed", "evt_1", at,
			verifytest.WithCustomer("cus_P2fQw8ZkLm3VxR"), verifytest.WithEmail("ann@example.com"),
			verifytest.WithPaymentStatus("unpaid")))
		var s stripe.CheckoutSession
		decodeObject(t, e, &s)
		check(t, "object", s.Object, "checkout.session")
		check(t, "customer", s.Customer.ID, "cus_P2fQw8ZkLm3VxR")
		check(t, "email", s.CustomerDetails.Email, "ann@example.com")
		check(t, "mode", s.Mode, stripe.CheckoutSessionModePayment)
		check(t, "payment_status", s.PaymentStatus, stripe.CheckoutSessionPaymentStatusUnpaid)
		check(t, "subscription", s.Subscription == nil, true)
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
	t.Run("invoice.paid about its own invoice", func(t *testing.T) {
		e := decodeEvent(t, verifytest.StripeEvent("invoice.paid", "evt_6", at,
			verifytest.WithObjectID("in_test_own"), verifytest.WithCustomer("cus_own"),
			verifytest.WithSubscription("sub_own", ""), verifytest.WithRelated("payment_intent", "pi_own"),
			verifytest.WithRelated("charge", "ch_own")))
		var in stripe.Invoice
		decodeObject(t, e, &in)
		check(t, "id", in.ID, "in_test_own")
		check(t, "customer", in.Customer.ID, "cus_own")
		check(t, "subscription", in.Subscription.ID, "sub_own")
		check(t, "payment_intent", in.PaymentIntent.ID, "pi_own")
		check(t, "charge", in.Charge.ID, "ch_own")
	})
	t.Run("customer.created of its own customer", func(t *testing.T) {
		e := decodeEvent(t, verifytest.StripeEvent("customer.created", "evt_7", at, verifytest.WithCustomer("cus_own")))
		var c stripe.Customer
		decodeObject(t, e, &c)
		check(t, "id", c.ID, "cus_own")
	})
	t.Run("checkout.session.async_payment_succeeded", func(t *testing.T) {
		e := decodeEvent(t, verifytest.StripeEvent("checkout.session.async_payment_succeeded", "evt_5", at))
		var s stripe.CheckoutSession
		decodeObject(t, e, &s)
		check(t, "type", string(e.Type), "checkout.session.async_payment_succeeded")
		check(t, "object", s.Object, "checkout.session")
	})
	for _, tc := range []struct {
		typ, status, wantStatus string
	}{
		{"customer.subscription.created", "", "active"},
		{"customer.subscription.updated", "past_due", "past_due"},
		{"customer.subscription.updated", "active", "active"},
		{"customer.subscription.deleted", "", "canceled"},
	} {
		t.Run(tc.typ+" "+tc.wantStatus, func(t *testing.T) {
			e := decodeEvent(t, verifytest.StripeEvent(tc.typ, "evt_3", at,
				verifytest.WithCustomer("cus_1"), verifytest.WithSubscription("sub_1", tc.status)))
			var s stripe.Subscription
			decodeObject(t, e, &s)
			check(t, "object", s.Object, "subscription")
			check(t, "id", s.ID, "sub_1")
			check(t, "customer", s.Customer.ID, "cus_1")
			check(t, "status", string(s.Status), tc.wantStatus)
			check(t, "items", len(s.Items.Data), 1)
			check(t, "item's subscription", s.Items.Data[0].Subscription, "sub_1")
			check(t, "previous_attributes", len(e.Data.PreviousAttributes) > 0, tc.typ == "customer.subscription.updated")
		})
	}
	t.Run("invoice.paid", func(t *testing.T) {
		e := decodeEvent(t, verifytest.StripeEvent("invoice.paid", "evt_4", at, verifytest.WithLivemode(true),
			verifytest.WithCustomer("cus_2"), verifytest.WithSubscription("sub_2", "")))
		var inv stripe.Invoice
		decodeObject(t, e, &inv)
		check(t, "object", inv.Object, "invoice")
		check(t, "customer", inv.Customer.ID, "cus_2")
		check(t, "subscription", inv.Subscription.ID, "sub_2")
		check(t, "livemode", e.Livemode && inv.Livemode, true)
	})
	t.Run("api_version", func(t *testing.T) {
		var e struct {
			APIVersion string `json:"api_version"`
		}
		if err := json.Unmarshal(verifytest.StripeEvent("invoice.paid", "evt_6", at, verifytest.WithAPIVersion("2019-02-19")), &e); err != nil {
			t.Fatal(err)
		}
		check(t, "api_version", e.APIVersion, "2019-02-19")
	})
}

// TestStripeFixture checks that every file in testdata/stripe is a real
// event of its name's type, and that a type without a file is refused.
func TestStripeFixture(t *testing.T) {
	paths, err := filepath.Glob("../../../testdata/stripe/*.json")
	if err != nil || len(paths) < 5 {
		t.Fatalf("found %d Stripe fixtures (%v), want at least 5", len(paths), err)
	}
	for _, p := range paths {
		typ := strings.TrimSuffix(filepath.Base(p), ".json")
		body, err := verifytest.StripeFixture(typ)
		if err != nil {
			t.Fatal(err)
		}
		var e stripe.Event
		if err := json.Unmarshal(body, &e); err != nil || string(e.Type) != typ || !strings.HasPrefix(e.ID, "evt_") || e.Data == nil {
			t.Errorf("%s: {id:%q type:%q} (%v), want an evt_ of type %s", p, e.ID, e.Type, err, typ)
		}
	}
	if _, err := verifytest.StripeFixture("balance.available"); err == nil || !strings.Contains(err.Error(), "invoice.paid") {
		t.Errorf("StripeFixture(balance.available) error = %v, want one naming the types there are", err)
	}
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
}

func TestStripeEventNoHTMLEscaping(t *testing.T) {
	body := verifytest.StripeEvent("checkout.session.completed", "evt_1", at, verifytest.WithEmail("a+b<c>&d@example.com"))
	if !bytes.Contains(body, []byte(`"email": "a+b<c>&d@example.com"`)) {
		t.Errorf("email is escaped; Stripe writes <, > and & as they are")
	}
}
