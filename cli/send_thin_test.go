package cli

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	hprovider "github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/stripeevent"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestSendThin: send --thin delivers a signed thin notification and first
// puts its v2 event and object on the stack's Stripe stand-in, so the
// processor's fetch finds them.
func TestSendThin(t *testing.T) {
	const secret = "whsec_test_send_thin"
	receiver, deliveries := fakeEndpoint(t, secret)
	api := standin.NewStripe()
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()
	state := filepath.Join(t.TempDir(), "state.json")
	st, _ := json.Marshal(devState{PID: os.Getpid(), BaseURL: receiver.URL, WebhookURL: receiver.URL + "/webhooks/stripe", WebhookSecret: secret,
		Endpoints: map[string]string{"STRIPE_API_URL": apiSrv.URL}})
	if err := os.WriteFile(state, st, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runSend(t, "stripe", "checkout.session.completed", "--thin", "--email", "thin@example.com", "--state-file", state)
	if code != 0 {
		t.Fatalf("send exited %d:\n%s", code, out)
	}
	m := regexp.MustCompile(`(?m)^1/1 stripe#(evt_test_65\w+) checkout\.session\.completed → accepted$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output:\n%s\nwant the thin event accepted", out)
	}
	got := deliveries()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	var n struct {
		ID, Object    string
		RelatedObject struct{ ID, URL string } `json:"related_object"`
	}
	if err := json.Unmarshal(got[0].body, &n); err != nil || n.ID != m[1] || n.Object != "v2.core.event" || n.RelatedObject.URL != "/v1/checkout/sessions/"+n.RelatedObject.ID {
		t.Fatalf("delivered %s, want a thin notification of %s about its checkout session", got[0].body, m[1])
	}
	// What the processor would fetch.
	env := map[string]string{"STRIPE_API_KEY": "sk_test_1", "STRIPE_API_URL": apiSrv.URL}
	fetch, err := stripe.Provider{}.Processor(context.Background(), &hprovider.Env{Getenv: func(k string) string { return env[k] }, HTTP: apiSrv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := fetch.Get(context.Background(), n.ID, got[0].body)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := stripeevent.Object[struct {
		ID              string
		CustomerDetails struct{ Email string } `json:"customer_details"`
	}](webhook.Event{Provider: "stripe", ID: n.ID, Raw: raw})
	if err != nil || cs.ID != n.RelatedObject.ID || cs.CustomerDetails.Email != "thin@example.com" {
		t.Errorf("fetched session %+v, %v; want %s with the --email given", cs, err, n.RelatedObject.ID)
	}
}
