package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	hprovider "github.com/hookinbox/hookinbox/provider"

	stripewebhook "github.com/stripe/stripe-go/v76/webhook"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// delivery is one request the fake endpoint received.
type delivery struct {
	signature string
	body      []byte
}

// fakeEndpoint answers like the receiver: accepted the first time an event
// ID arrives, duplicate after, and 401 when Stripe's verifier rejects it.
func fakeEndpoint(t *testing.T, secret string) (*httptest.Server, func() []delivery) {
	t.Helper()
	var (
		mu   sync.Mutex
		got  []delivery
		seen = map[string]bool{}
	)
	verify := verifytest.StripeVerify(nil, secret)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, delivery{r.Header.Get("Stripe-Signature"), body})
		ev, err := verify(r.Header.Get("Stripe-Signature"), body)
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid or missing signature"}`)
			return
		}
		status := "accepted"
		if seen[ev.ID] {
			status = "duplicate"
		}
		seen[ev.ID] = true
		fmt.Fprintf(w, `{"status":%q}`, status)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []delivery {
		mu.Lock()
		defer mu.Unlock()
		return append([]delivery(nil), got...)
	}
}

func runSend(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), append([]string{"send"}, args...), &stdout, &stderr)
	return stdout.String() + stderr.String(), code
}

func TestSendSignsLikeStripe(t *testing.T) {
	const secret = "whsec_test_send"
	srv, deliveries := fakeEndpoint(t, secret)
	out, code := runSend(t, "stripe", "checkout.session.completed", "--times", "3", "--url", srv.URL, "--secret", secret)
	if code != 0 {
		t.Fatalf("send exited %d:\n%s", code, out)
	}
	wantLines := regexp.MustCompile(`(?m)^1/3 stripe#(evt_\w{24}) checkout.session.completed → accepted\n2/3 stripe#evt_\w{24} .* → duplicate\n3/3 .* → duplicate\nsee it: hookinbox inspect 'stripe#(evt_\w{24})'\n$`)
	if m := wantLines.FindStringSubmatch(out); m == nil || m[1] != m[2] {
		t.Errorf("output:\n%s\nwant one accepted, two duplicates and the inspect command of that event", out)
	}
	got := deliveries()
	if len(got) != 3 {
		t.Fatalf("%d deliveries, want 3", len(got))
	}
	for i, d := range got {
		if !bytes.Equal(d.body, got[0].body) {
			t.Errorf("delivery %d has another body than the first: --times must resend the same event", i+1)
		}
		// Check against stripe-go's own signing code.
		m := regexp.MustCompile(`^t=(\d+),v1=([0-9a-f]{64})$`).FindStringSubmatch(d.signature)
		if m == nil {
			t.Fatalf("Stripe-Signature %q is not t=...,v1=...", d.signature)
		}
		ts, _ := strconv.ParseInt(m[1], 10, 64)
		want := fmt.Sprintf("%x", stripewebhook.ComputeSignature(time.Unix(ts, 0), d.body, secret))
		if m[2] != want {
			t.Errorf("v1 = %s, stripe-go computes %s", m[2], want)
		}
		if _, err := stripewebhook.ConstructEventWithOptions(d.body, d.signature, secret, stripewebhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true}); err != nil {
			t.Errorf("stripe-go rejects the delivery: %v", err)
		}
	}
}

func TestSendFailures(t *testing.T) {
	srv, _ := fakeEndpoint(t, "whsec_right")
	out, code := runSend(t, "stripe", "invoice.paid", "--url", srv.URL, "--secret", "whsec_wrong")
	if code != 1 {
		t.Errorf("send with the wrong secret exited %d, want 1:\n%s", code, out)
	}
	if !strings.Contains(out, "→ 401 Unauthorized invalid or missing signature") || !strings.Contains(out, "1 of 1 deliveries") {
		t.Errorf("output does not show the 401 and the failure count:\n%s", out)
	}

	out, code = runSend(t, "stripe", "invoice.paid", "--url", "http://127.0.0.1:1/webhooks/stripe", "--secret", "x", "--timeout", "2s")
	if code != 1 || !strings.Contains(out, "is hookinbox dev running") {
		t.Errorf("send to a closed port exited %d, want 1 with advice:\n%s", code, out)
	}
}

func TestSendIDs(t *testing.T) {
	const secret = "whsec_ids"
	fixture := filepath.Join(repoRoot(t), "testdata", "stripe", "invoice.paid.json")
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var head struct{ ID string }
	_ = json.Unmarshal(raw, &head)

	tests := []struct {
		name   string
		args   []string
		wantID string // "" means a fresh evt_ ID
	}{
		{"built event gets a fresh id", []string{"customer.subscription.updated", "--subscription", "sub_1", "--status", "past_due"}, ""},
		{"built event with --id", []string{"invoice.paid", "--id", "evt_given_1"}, "evt_given_1"},
		{"file gets a fresh id", []string{fixture}, ""},
		{"file with --id", []string{fixture, "--id", "evt_given_2"}, "evt_given_2"},
		{"file with --keep-id", []string{fixture, "--keep-id"}, head.ID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, deliveries := fakeEndpoint(t, secret)
			out, code := runSend(t, append([]string{"stripe"}, append(tt.args, "--url", srv.URL, "--secret", secret)...)...)
			if code != 0 {
				t.Fatalf("send exited %d:\n%s", code, out)
			}
			got := deliveries()
			var ev struct{ ID, Type string }
			if err := json.Unmarshal(got[0].body, &ev); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantID != "" && ev.ID != tt.wantID:
				t.Errorf("id = %q, want %q", ev.ID, tt.wantID)
			case tt.wantID == "" && (ev.ID == head.ID || !regexp.MustCompile(`^evt_\w{24}$`).MatchString(ev.ID)):
				t.Errorf("id = %q, want a fresh evt_ ID", ev.ID)
			}
			if strings.Contains(string(got[0].body), head.ID) && ev.ID != head.ID {
				t.Errorf("the file's old id is still in the body")
			}
		})
	}
}

// TestSendSignsAsEachProvider: every realistic payload in testdata/<provider>/
// sent by `hookinbox send` verifies with that provider's verifier under the
// local secret, and gives the key send printed.
func TestSendSignsAsEachProvider(t *testing.T) {
	var mu sync.Mutex
	var got []webhook.Event
	var headers []map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		provider := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		p, _ := providers().Lookup(provider)
		// What the local stack's receiver accepts.
		v, err := p.Verifier(envconfig.Split(pipeline.LocalEnv("")[p.Webhook().SecretEnv]), &hprovider.Env{})
		if err != nil {
			t.Errorf("%s: %v", provider, err)
		}
		body, _ := io.ReadAll(r.Body)
		header := map[string]string{}
		for k := range r.Header {
			header[strings.ToLower(k)] = r.Header.Get(k)
		}
		query := map[string]string{}
		for k := range r.URL.Query() {
			query[k] = r.URL.Query().Get(k)
		}
		evs, err := v.Verify(r.Context(), webhook.Request{Method: r.Method, Header: header, Query: query, Body: body})
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		mu.Lock()
		got = append(got, evs...)
		headers = append(headers, header)
		mu.Unlock()
		_, _ = w.Write([]byte(`{"status":"accepted"}`))
	}))
	defer srv.Close()
	tests := []struct {
		name, provider, file, wantType string
		flags                          func(*sendFlags)
		header                         func(map[string]string) bool // what the delivery's header must show
	}{
		{"github", "github", "../testdata/github/issues.json", "issues", nil, nil},
		{"github --form", "github", "../testdata/github/issues.json", "issues", variant("form"),
			func(h map[string]string) bool { return h["content-type"] == "application/x-www-form-urlencoded" }},
		{"shopify", "shopify", "../testdata/shopify/orders_paid.json", "orders/paid", nil, nil},
		{"shopify --unprefixed", "shopify", "../testdata/shopify/orders_paid.json", "orders/paid", variant("unprefixed"),
			func(h map[string]string) bool {
				return h["shopify-hmac-sha256"] != "" && h["x-shopify-hmac-sha256"] == ""
			}},
		{"standard", "standard", "../testdata/standard/invoice.paid.json", "invoice.paid", nil,
			func(h map[string]string) bool { return strings.HasPrefix(h["webhook-signature"], "v1,") }},
		{"standard --v1a", "standard", "../testdata/standard/invoice.paid.json", "invoice.paid", variant("v1a"),
			func(h map[string]string) bool { return strings.HasPrefix(h["webhook-signature"], "v1a,") }},
		// The running stack's list, as send reads it from the state file:
		// its whpk_ key signs nothing, its whsec_ secret signs v1.
		{"standard, the stack's secrets", "standard", "../testdata/standard/invoice.paid.json", "invoice.paid",
			func(f *sendFlags) { f.secret = pipeline.LocalEnv("")["STANDARD_WEBHOOK_SECRET"] },
			func(h map[string]string) bool { return !strings.Contains(h["webhook-signature"], " ") }},
		{"adyen", "adyen", "../testdata/adyen/REFUND.json", "REFUND", nil, nil},
		// hookinbox's own payloads by name, in a team's module too.
		{"shopify topic", "shopify", "orders/paid", "orders/paid", nil, nil},
		{"github event", "github", "issues", "issues", nil, nil},
		{"standard type", "standard", "invoice.paid", "invoice.paid", nil, nil},
		{"adyen event code", "adyen", "AUTHORISATION", "AUTHORISATION", nil, nil},
		{"gopay", "gopay", "3000006529", "notification", nil, nil},
		{"paddle", "paddle", "../testdata/paddle/transaction.completed.json", "transaction.completed", nil,
			func(h map[string]string) bool { return strings.HasPrefix(h["paddle-signature"], "ts=") }},
		{"mollie", "mollie", "tr_WDqYK6vllg", "notification", nil,
			func(h map[string]string) bool { return h["content-type"] == "application/x-www-form-urlencoded" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, headers = nil, nil
			var out strings.Builder
			f := sendFlags{url: srv.URL + "/webhooks/" + tc.provider, stateFile: t.TempDir() + "/none.json", times: 1, timeout: 5 * time.Second}
			if tc.flags != nil {
				tc.flags(&f)
			}
			if err := sendProvider(t.Context(), tc.provider, tc.file, f, &out); err != nil {
				t.Fatalf("send: %v\n%s", err, out.String())
			}
			if len(got) != 1 || got[0].Type != tc.wantType || !strings.Contains(out.String(), string(got[0].Key())) {
				t.Fatalf("verified %+v; send printed:\n%s", got, out.String())
			}
			if tc.header != nil && !tc.header(headers[0]) {
				t.Errorf("delivery headers %v", headers[0])
			}
			if file, err := os.ReadFile(tc.file); err == nil && tc.provider == "github" && string(got[0].Raw) != string(file) {
				t.Errorf("the event verified is not the file's JSON: %.80q", got[0].Raw)
			}
		})
	}
	// Each flag is for its provider only.
	for _, args := range [][]string{{"stripe", "invoice.paid", "--form"}, {"github", "x.json", "--unprefixed"}, {"shopify", "x.json", "--v1a"}} {
		if out, code := runSend(t, append(args, "--url", srv.URL)...); code != 2 || !strings.Contains(out, "only") {
			t.Errorf("send %v: exit %d\n%s", args, code, out)
		}
	}
}

// variant sets the variant flag name.
func variant(name string) func(*sendFlags) {
	return func(f *sendFlags) { set := true; f.variants = map[string]*bool{name: &set} }
}

// TestSendMakesFreshObjects: each send of an event type is about objects
// of its own (invoice, subscription, payment intent, Shopify order), so a
// business keyed by them sees new ones; --object names one.
func TestSendMakesFreshObjects(t *testing.T) {
	type object struct {
		ID, Subscription string
		PaymentIntent    string `json:"payment_intent"`
	}
	stripeObject := func(t *testing.T, args ...string) object {
		t.Helper()
		srv, deliveries := fakeEndpoint(t, "whsec_fresh")
		if out, code := runSend(t, append([]string{"stripe"}, append(args, "--url", srv.URL, "--secret", "whsec_fresh")...)...); code != 0 {
			t.Fatalf("send exited %d:\n%s", code, out)
		}
		var ev struct {
			Data struct{ Object object } `json:"data"`
		}
		if err := json.Unmarshal(deliveries()[0].body, &ev); err != nil {
			t.Fatal(err)
		}
		return ev.Data.Object
	}
	a, b := stripeObject(t, "invoice.paid"), stripeObject(t, "invoice.paid")
	for _, pair := range [][2]string{{a.ID, b.ID}, {a.Subscription, b.Subscription}, {a.PaymentIntent, b.PaymentIntent}} {
		if pair[0] == pair[1] || pair[0] == "" {
			t.Errorf("two sends of invoice.paid name %q and %q, want two fresh IDs", pair[0], pair[1])
		}
	}
	if !strings.HasPrefix(a.ID, "in_") || !strings.HasPrefix(a.Subscription, "sub_") {
		t.Errorf("invoice %s of subscription %s, want in_... and sub_...", a.ID, a.Subscription)
	}
	if got := stripeObject(t, "invoice.paid", "--object", "in_given", "--subscription", "sub_given"); got.ID != "in_given" || got.Subscription != "sub_given" {
		t.Errorf("--object in_given --subscription sub_given sent %+v", got)
	}

	var orders []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var order struct{ ID json.Number }
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &order)
		orders = append(orders, order.ID.String())
		_, _ = w.Write([]byte(`{"status":"accepted"}`))
	}))
	defer srv.Close()
	for range 2 {
		if out, code := runSend(t, "shopify", "orders/paid", "--url", srv.URL, "--secret", "s"); code != 0 {
			t.Fatalf("send shopify exited %d:\n%s", code, out)
		}
	}
	if len(orders) != 2 || orders[0] == orders[1] || len(orders[0]) != 13 {
		t.Errorf("two sends of orders/paid sent orders %v, want two fresh 13-digit IDs", orders)
	}
}

// TestFixtures checks every testdata/stripe event: it is a Stripe event the
// verifier accepts, named after its type.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "stripe", "*.json"))
	if err != nil || len(files) < 5 {
		t.Fatalf("want at least 5 fixtures, got %d (%v)", len(files), err)
	}
	const secret = "whsec_fixture"
	verify := verifytest.StripeVerify(nil, secret)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := verify(signAt(body, time.Now(), secret), body)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimSuffix(filepath.Base(f), ".json"); ev.Type != want {
				t.Errorf("type = %q, want %q (the file name)", ev.Type, want)
			}
		})
	}
}

func signAt(body []byte, at time.Time, secret string) string {
	return fmt.Sprintf("t=%d,v1=%x", at.Unix(), stripewebhook.ComputeSignature(at, body, secret))
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := devstack.RepoRoot("")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestSendStagesIDOnlyPayments: given a payment file, send first sets the
// payment on the running stack's stand-in (GoPay's or Mollie's), then
// notifies with its id alone; given an id, it only notifies.
func TestSendStagesIDOnlyPayments(t *testing.T) {
	var mu sync.Mutex
	var got []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+string(body))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"status":"accepted"}`))
	}))
	defer receiver.Close()
	gopayAPI, mollieAPI := standin.NewGoPay("id", "secret"), standin.NewMollie("test_key")
	gopaySrv, mollieSrv := httptest.NewServer(gopayAPI), httptest.NewServer(mollieAPI)
	defer gopaySrv.Close()
	defer mollieSrv.Close()
	state := filepath.Join(t.TempDir(), "state.json")
	st, _ := json.Marshal(devState{PID: os.Getpid(), BaseURL: receiver.URL,
		Endpoints: map[string]string{"GOPAY_API_URL": gopaySrv.URL + "/api", "MOLLIE_API_URL": mollieSrv.URL}})
	if err := os.WriteFile(state, st, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ provider, what, want string }{
		{"gopay", "../testdata/gopay/payment.PAID.json", "GET /webhooks/gopay?id=3000006529 "},
		{"mollie", "../testdata/mollie/payment.paid.json", "POST /webhooks/mollie id=tr_5B8cwPMGnU6qLbRvo7qEZo"},
		{"mollie", "tr_WDqYK6vllg", "POST /webhooks/mollie id=tr_WDqYK6vllg"},
	}
	for _, tc := range tests {
		t.Run(tc.provider+" "+filepath.Base(tc.what), func(t *testing.T) {
			got = nil
			if out, code := runSend(t, tc.provider, tc.what, "--state-file", state); code != 0 {
				t.Fatalf("send exited %d:\n%s", code, out)
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("delivered %q, want %q", got, tc.want)
			}
		})
	}
	// The processor's fetch finds the staged Mollie payment, and only it.
	for id, want := range map[string]int{"tr_5B8cwPMGnU6qLbRvo7qEZo": http.StatusOK, "tr_WDqYK6vllg": http.StatusNotFound} {
		req, _ := http.NewRequest(http.MethodGet, mollieSrv.URL+"/v2/payments/"+id, nil)
		req.Header.Set("Authorization", "Bearer test_key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET payment %s: %d, want %d", id, resp.StatusCode, want)
		}
	}
}
