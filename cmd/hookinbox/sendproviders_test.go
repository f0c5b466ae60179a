package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/verify"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestSendSignsAsEachProvider: every realistic payload in testdata/<provider>/
// sent by `hookinbox send` verifies with that provider's verifier under the
// local secret, and gives the key send printed.
func TestSendSignsAsEachProvider(t *testing.T) {
	var mu sync.Mutex
	var got []webhook.Event
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		provider := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		spec, _ := verify.Lookup(provider)
		v, err := spec.New([]string{localSecrets[provider]}, verify.Options{})
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
		mu.Unlock()
		_, _ = w.Write([]byte(`{"status":"accepted"}`))
	}))
	defer srv.Close()
	tests := []struct {
		provider, file, wantType string
	}{
		{"github", "../../testdata/github/issues.json", "issues"},
		{"shopify", "../../testdata/shopify/orders_paid.json", "orders/paid"},
		{"standard", "../../testdata/standard/invoice.paid.json", "invoice.paid"},
		{"adyen", "../../testdata/adyen/REFUND.json", "REFUND"},
		{"gopay", "3000006529", "notification"},
	}
	for _, tc := range tests {
		t.Run(tc.provider, func(t *testing.T) {
			got = nil
			var out strings.Builder
			f := sendFlags{url: srv.URL + "/webhooks/" + tc.provider, stateFile: t.TempDir() + "/none.json", times: 1, timeout: 5 * time.Second}
			if err := sendProvider(context.Background(), tc.provider, tc.file, f, &out); err != nil {
				t.Fatalf("send: %v\n%s", err, out.String())
			}
			if len(got) != 1 || got[0].Type != tc.wantType || !strings.Contains(out.String(), string(got[0].Key())) {
				t.Errorf("verified %+v; send printed:\n%s", got, out.String())
			}
		})
	}
}
