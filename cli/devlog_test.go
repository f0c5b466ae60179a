package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/provider/sample"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

// TestDevLogNamesEveryProvidersEvents: the line `hookinbox dev` prints for
// a delivery names the provider's path, the receiver's answer and the key
// and type of every event the delivery carries, for every provider (a
// delivery signed as `hookinbox send` signs it); a delivery that does not
// verify names no event.
func TestDevLogNamesEveryProvidersEvents(t *testing.T) {
	env := pipeline.LocalEnv("")
	var log bytes.Buffer
	d := &devStack{stderr: &log, verifiers: deliveryVerifiers(env)}
	receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"accepted"}`)
	})
	tests := []struct{ provider, what, wantType string }{
		{"stripe", "checkout.session.completed", "checkout.session.completed"},
		{"github", "../testdata/github/issues.json", "issues"},
		{"shopify", "../testdata/shopify/orders_paid.json", "orders/paid"},
		{"standard", "../testdata/standard/invoice.paid.json", "invoice.paid"},
		{"adyen", "../testdata/adyen/REFUND.json", "REFUND"},
		{"gopay", "3000006529", "notification"},
	}
	for _, tc := range tests {
		t.Run(tc.provider, func(t *testing.T) {
			log.Reset()
			p, _ := providers().Lookup(tc.provider)
			ev, err := testEvent(senders()[tc.provider], tc.what, sample.Event{})
			if err != nil {
				t.Fatal(err)
			}
			secrets := envconfig.Split(env[p.Webhook().SecretEnv])
			dl, err := signDelivery(senders()[tc.provider], ev, "http://127.0.0.1:3000/webhooks/"+tc.provider, secrets, secrets)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(dl.req.Method, dl.url, bytes.NewReader(dl.req.Body))
			header := dl.req.Header
			for k, v := range header {
				req.Header.Set(k, v)
			}
			d.serveLogged(receiver, httptest.NewRecorder(), req)
			line := log.String()
			for _, key := range strings.Fields(dl.key) {
				if want := key + " (" + tc.wantType + ")"; !strings.Contains(line, want) {
					t.Errorf("log line %q names no %q", line, want)
				}
			}
			if !strings.Contains(line, "/webhooks/"+tc.provider+" → 200 accepted") {
				t.Errorf("log line %q, want the path and the answer", line)
			}

			// The same delivery with its body changed verifies no more
			// (Adyen signs some fields of each item: change the amount).
			if len(dl.req.Body) == 0 {
				return
			}
			tampered := append(bytes.Clone(dl.req.Body), ' ')
			if tc.provider == "adyen" {
				tampered = bytes.Replace(dl.req.Body, []byte("2500"), []byte("2501"), 1)
			}
			log.Reset()
			req = httptest.NewRequest(dl.req.Method, dl.url, bytes.NewReader(tampered))
			for k, v := range header {
				req.Header.Set(k, v)
			}
			d.serveLogged(receiver, httptest.NewRecorder(), req)
			if strings.Contains(log.String(), "#") {
				t.Errorf("a delivery that does not verify: log line %q names an event", log.String())
			}
		})
	}
}
