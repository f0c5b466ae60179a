package shop

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if strings.Count(s, old) != 1 {
		t.Fatalf("%q occurs %d times, want once", old, strings.Count(s, old))
	}
	return strings.Replace(s, old, new, 1)
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none for a valid config
	}{
		{"Valid", Config{Table: "shop", MailFrom: "shop@example.com"}, nil},
		{"ValidWithName", Config{Table: "shop", MailFrom: "Shop <shop@example.com>"}, nil},
		{"Empty", Config{}, []string{"no table", "no mail-from"}},
		{"BadAddress", Config{Table: "shop", MailFrom: "not an address"}, []string{"mail-from address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want an error mentioning %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %v, want it to mention %q", err, w)
				}
			}
		})
	}
}

// TestFromEnvTakesTheProcessorsStripeKey: built by processorfn, whose
// context carries the Stripe key it loaded, the shop needs no Stripe key
// setting of its own and loads none; built alone, it requires one.
func TestFromEnvTakesTheProcessorsStripeKey(t *testing.T) {
	env := map[string]string{"SHOP_TABLE": "shop", "MAIL_FROM": "shop@example.com"}
	getenv := func(k string) string { return env[k] }
	ctx := provider.ContextWithEnv(context.Background(), &provider.Env{Getenv: func(k string) string {
		return map[string]string{"STRIPE_API_KEY": "sk_test_1"}[k]
	}})
	if _, err := fromEnv(ctx, aws.Config{Region: "us-east-1"}, getenv); err != nil {
		t.Errorf("FromEnv with the processor's key and no STRIPE_API_KEY: %v", err)
	}
	if _, err := fromEnv(context.Background(), aws.Config{Region: "us-east-1"}, getenv); err == nil || !strings.Contains(err.Error(), "STRIPE_API_KEY") {
		t.Errorf("FromEnv alone without STRIPE_API_KEY: %v, want an error naming it", err)
	}
}

func TestTagValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hookinbox:stripe#evt_1AbC-d:welcome-email", "hookinbox.stripe.evt_1AbC-d.welcome-email"},
		{"a@b.c_d-e", "a@b.c_d-e"},
		{"sp ace/slash", "sp.ace.slash"},
	}
	for _, tt := range tests {
		if got := TagValue(tt.in); got != tt.want {
			t.Errorf("TagValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClassifyStripe(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		permanent bool
	}{
		{"BadRequest", http.StatusBadRequest, true},
		{"Unauthorized", http.StatusUnauthorized, false}, // a rolled key: reloaded, retried
		{"Forbidden", http.StatusForbidden, false},
		{"NotFound", http.StatusNotFound, true},
		{"Conflict", http.StatusConflict, false},
		{"TooManyRequests", http.StatusTooManyRequests, false},
		{"InternalServerError", http.StatusInternalServerError, false},
		{"ServiceUnavailable", http.StatusServiceUnavailable, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stripeAPI := standin.NewStripe()
			stripeAPI.FailNext(tt.status)
			srv := serveStandin(t, stripeAPI)
			b := newStripeBilling(secretstest.Static("sk_test_123"), srv.URL, srv.Client())
			_, err := b.CreateInvoice(context.Background(), invoiceRequest{Customer: "cus_1", Key: "stripe-checkout#cs_1", IdempotencyKey: "k"})
			if err == nil {
				t.Fatal("CreateInvoice succeeded, want an error")
			}
			if got := webhook.IsPermanent(err); got != tt.permanent {
				t.Errorf("IsPermanent(%v) = %t, want %t", err, got, tt.permanent)
			}
			if calls := stripeAPI.Calls(); len(calls) != 1 {
				t.Errorf("%d requests, want 1: retries go through the queue", len(calls))
			}
		})
	}
	t.Run("NetworkError", func(t *testing.T) {
		srv := serveStandin(t, standin.NewStripe())
		url := srv.URL
		srv.Close()
		_, err := newStripeBilling(secretstest.Static("sk_test_123"), url, nil).CreateInvoice(context.Background(), invoiceRequest{Customer: "cus_1", Key: "stripe-checkout#cs_1", IdempotencyKey: "k"})
		if err == nil || webhook.IsPermanent(err) {
			t.Errorf("err = %v, want transient", err)
		}
	})
}

func TestStripeBillingRequest(t *testing.T) {
	stripeAPI := standin.NewStripe()
	srv := serveStandin(t, stripeAPI)
	b := newStripeBilling(secretstest.Static("sk_test_123"), srv.URL, srv.Client())
	req := invoiceRequest{Customer: "cus_1", Description: "Order cs_1", IdempotencyKey: "hookinbox:stripe-checkout#cs_1:create-invoice",
		Key: "stripe-checkout#cs_1"}
	id1, err := b.CreateInvoice(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := b.CreateInvoice(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if id1 != id2 {
		t.Errorf("the same key gave invoices %s and %s", id1, id2)
	}
	// The second call found the invoice by its metadata: one POST.
	want := []invoiceCall{
		{IdempotencyKey: req.IdempotencyKey, Customer: "cus_1", Event: "stripe-checkout#cs_1", InvoiceID: id1},
	}
	if diff := cmp.Diff(want, stripeCalls(stripeAPI)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A refused key is reloaded once and the call made again with the new
// key; a key that does not change is a transient error.
func TestStripeBillingReloadsRefusedKey(t *testing.T) {
	stripeAPI := standin.NewStripe()
	stripeAPI.Key = "sk_test_new"
	srv := serveStandin(t, stripeAPI)
	stored := "sk_test_old"
	keys := &secrets.Rotating{
		Load:        func(context.Context) ([]string, error) { return []string{stored}, nil },
		MinInterval: time.Nanosecond,
	}
	b := newStripeBilling(keys, srv.URL, srv.Client())
	req := invoiceRequest{Customer: "cus_1", Key: "stripe-checkout#cs_1", IdempotencyKey: "k1"}
	_, err := b.CreateInvoice(context.Background(), req)
	if err == nil || webhook.IsPermanent(err) {
		t.Fatalf("with a refused key that Secrets Manager still holds: err = %v, want transient", err)
	}
	stored = "sk_test_new"
	if _, err := b.CreateInvoice(context.Background(), req); err != nil {
		t.Fatalf("after the key was put in Secrets Manager: %v", err)
	}
	if got := stripeAPI.Refused(); got != 2 {
		t.Errorf("refused %d requests, want 2 (one per call: an unchanged key is not tried again)", got)
	}
	if got := stripeAPI.Invoices(); len(got) != 1 {
		t.Errorf("invoices = %v, want 1", got)
	}
}

func TestClassifySES(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		permanent bool
	}{
		{"MessageRejected", &smithy.GenericAPIError{Code: "MessageRejected", Fault: smithy.FaultClient}, true},
		{"NotVerified", &smithy.GenericAPIError{Code: "MailFromDomainNotVerifiedException", Fault: smithy.FaultClient}, true},
		{"Throttled", &smithy.GenericAPIError{Code: "TooManyRequestsException", Fault: smithy.FaultClient}, false},
		{"ServerFault", &smithy.GenericAPIError{Code: "InternalFailure", Fault: smithy.FaultServer}, false},
		{"Network", errors.New("connection reset"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := webhook.IsPermanent(classifySES(tt.err)); got != tt.permanent {
				t.Errorf("IsPermanent = %t, want %t", got, tt.permanent)
			}
		})
	}
}

func TestStateJSON(t *testing.T) {
	b, err := json.Marshal(State{Access: []Access{}, Entitlements: []Entitlement{}, Subscriptions: []Subscription{}, Emails: []Email{}, Invoices: []Invoice{}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"access":[],"entitlements":[],"subscriptions":[],"emails":[],"invoices":[]}`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

// The requests stripeBilling makes are valid for Stripe's API: stripe-mock
// checks each against Stripe's OpenAPI specification (an unknown parameter
// or a wrong type gets 400) and answers with its fixtures.
func TestStripeBillingRequestsMatchStripesAPI(t *testing.T) {
	mock := devstacktest.StripeMockForTest(t)
	b := newStripeBilling(secretstest.Static("sk_test_123"), mock.URL, nil)
	ctx := context.Background()
	id, err := b.CreateInvoice(ctx, invoiceRequest{
		Customer: "cus_123", Description: "Order cs_123", Key: "stripe-checkout#cs_123", Since: t0,
		Metadata: map[string]string{"checkout_session": "cs_123"}, IdempotencyKey: "hookinbox:stripe#evt_123:create-invoice",
	})
	if err != nil || id == "" {
		t.Errorf("CreateInvoice (list by customer and created, then create) = %q, %v; want an invoice", id, err)
	}
	sub, err := b.Subscription(ctx, "sub_123")
	if err != nil || sub.ID != "sub_123" || sub.Status == "" || sub.Customer == "" {
		t.Errorf("Subscription = %+v, %v; want sub_123 with a status and a customer", sub, err)
	}
}
