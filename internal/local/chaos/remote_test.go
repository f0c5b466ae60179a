package chaos

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"
)

// TestRemoteDeliversEveryProviderToItsURL: a Remote sends each event to
// its provider's webhook URL beside the one given, and an id-only
// provider's object (GoPay's, Mollie's) first goes to that provider's
// stand-in among the stack's endpoints, as the provider's state changes
// before it notifies.
func TestRemoteDeliversEveryProviderToItsURL(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		line := r.Method + " " + r.URL.Path
		if r.Method == http.MethodPut {
			line += " " + string(body)
		}
		got = append(got, line)
	}))
	defer srv.Close()
	evs, err := ReadEvents(strings.NewReader(`{"object":"hookinbox.delivery","provider":"mollie","id":"tr_r1","type":"notification","body":{"id":"tr_r1","status":"paid"}}
{"object":"hookinbox.delivery","provider":"github","id":"d-r1","type":"ping","body":{"zen":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := NewRemote(RemoteConfig{WebhookURL: srv.URL + "/webhooks/stripe", Secrets: LocalSecrets,
		Endpoints: map[string]string{"MOLLIE_API_URL": srv.URL + "/mollie"}}, aws.Config{})
	for _, ev := range evs {
		if code, err := r.Deliver(context.Background(), ev); err != nil || code != http.StatusOK {
			t.Fatalf("Deliver %s = %d, %v", ev.Key(), code, err)
		}
	}
	want := []string{`PUT /mollie/_standin/payments/tr_r1 {"id":"tr_r1","status":"paid"}`, "POST /webhooks/mollie", "POST /webhooks/github"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	elsewhere := NewRemote(RemoteConfig{WebhookURL: srv.URL + "/hooks", Secrets: LocalSecrets}, aws.Config{})
	if _, err := elsewhere.Deliver(context.Background(), evs[1]); err == nil || !strings.Contains(err.Error(), "does not end in a provider's name") {
		t.Errorf("Deliver to a URL that names no provider: %v", err)
	}
}
