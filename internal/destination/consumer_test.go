package destination

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// consumerCheck verifies a delivery as the Standard Webhooks libraries
// do, written out here rather than through hookinbox's own verifier: the
// body decoded as UTF-8 (Python's standardwebhooks calls bytes.decode(),
// which raises on anything else; the JavaScript one decodes it as a
// string), the HMAC-SHA256 under the base64 key after "whsec_" of
// "<webhook-id>.<webhook-timestamp>.<body>", base64, equal to one of the
// "v1," signatures; then the body parsed as JSON.
func consumerCheck(h http.Header, body []byte) error {
	if !utf8.Valid(body) {
		return errors.New("the body is not UTF-8: a library decoding it fails or changes its bytes")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(testSecret, "whsec_"))
	if err != nil {
		return err
	}
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%s.%s", h.Get("webhook-id"), h.Get("webhook-timestamp"), body)
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	ok := false
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if v, s, _ := strings.Cut(sig, ","); v == "v1" && hmac.Equal([]byte(s), []byte(want)) {
			ok = true
		}
	}
	if !ok {
		return errors.New("no v1 signature matches")
	}
	if !json.Valid(body) {
		return errors.New("the body is not JSON")
	}
	return nil
}

// TestConsumersVerifyEveryPayload: payloads at the edges, as a provider
// may send them and the receivers accept them, delivered to an HTTP
// destination whose consumer checks them as the Standard Webhooks
// libraries do (consumerCheck) over the bytes it received: each
// verifies, and its payload is the provider's bytes when they are JSON
// (UTF-8, as JSON must be), a JSON string of them otherwise.
func TestConsumersVerifyEveryPayload(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 9_000) + "1" + strings.Repeat("}", 9_000)
	tests := []struct {
		name, raw string
		asString  bool // the payload is a JSON string of raw
	}{
		{name: "an array", raw: `[{"id":"evt_1"},{"id":"evt_2"}]`},
		{name: "9000 levels deep", raw: deep},
		{name: "6 MB, as a body kept in S3", raw: `{"type":"invoice.paid","lines":"` + strings.Repeat(`<&> é \u00e9 `, 6<<20/16) + `"}`},
		{name: "not UTF-8 in a string", raw: "{\"type\":\"invoice.paid\",\"name\":\"Ren\xe9e\"}", asString: true},
		{name: "a byte order mark", raw: "\xef\xbb\xbf{\"type\":\"invoice.paid\"}", asString: true},
		{name: "a form", raw: "id=3000006529&state=PAID", asString: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var body []byte
			var verr error
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				body, _ = io.ReadAll(r.Body)
				if verr = consumerCheck(r.Header, body); verr != nil {
					w.WriteHeader(http.StatusUnauthorized)
				}
			}))
			defer srv.Close()
			s := newSet(t, nil, httpConfig("crm", srv.URL))
			ev := webhook.Event{Provider: "standard", ID: "msg_edge", Type: "invoice.paid", Raw: []byte(tt.raw)}
			err := s.Wrap(nil).Handle(context.Background(), ev, effects.NewMemoryLedger().For(ev.Key()))
			mu.Lock()
			defer mu.Unlock()
			if err != nil || verr != nil {
				t.Fatalf("delivery = %.200v; the consumer's check: %v", err, verr)
			}
			var got Body
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			var text string
			isString := json.Unmarshal(got.Payload, &text) == nil
			switch {
			case tt.asString && !isString:
				t.Errorf("payload = %.80s; want a JSON string of the provider's bytes", got.Payload)
			case !tt.asString && !bytes.Equal(body[bytes.Index(body, []byte(`"payload":`))+len(`"payload":`):len(body)-1], []byte(tt.raw)):
				t.Errorf("payload differs from the provider's bytes")
			}
		})
	}
}
