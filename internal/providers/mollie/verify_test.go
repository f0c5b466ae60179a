package mollie_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestVerify(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantID  string
		wantErr error // nil: accepted
	}{
		{name: "Mollie's documented example", body: "id=tr_5B8cwPMGnU6qLbRvo7qEZo", wantID: "tr_5B8cwPMGnU6qLbRvo7qEZo"},
		{name: "an older, shorter id", body: "id=tr_d0b0E3EA3v", wantID: "tr_d0b0E3EA3v"},
		{name: "the longest id Mollie issues", body: "id=tr_" + strings.Repeat("a", 29), wantID: "tr_" + strings.Repeat("a", 29)},
		{name: "another parameter beside id", body: "id=tr_d0b0E3EA3v&testByMollie=1", wantID: "tr_d0b0E3EA3v"},
		{name: "empty body", body: "", wantErr: provider.ErrNoEventID},
		{name: "no id parameter", body: "payment=tr_d0b0E3EA3v", wantErr: provider.ErrNoEventID},
		{name: "empty id", body: "id=", wantErr: provider.ErrNoEventID},
		{name: "two ids", body: "id=tr_d0b0E3EA3v&id=tr_WDqYK6vllg", wantErr: provider.ErrBadEventID},
		{name: "one character too long", body: "id=tr_" + strings.Repeat("a", 30), wantErr: provider.ErrBadEventID},
		{name: "a huge body", body: "id=tr_d0b0E3EA3v&x=" + strings.Repeat("a", 1<<16), wantErr: provider.ErrBadEventID},
		{name: "prefix only", body: "id=tr_", wantErr: provider.ErrBadEventID},
		{name: "an order id", body: "id=ord_kEn1PlbGa", wantErr: provider.ErrBadEventID},
		{name: "a refund id", body: "id=re_4qqhO89gsT", wantErr: provider.ErrBadEventID},
		{name: "upper-case prefix", body: "id=TR_d0b0E3EA3v", wantErr: provider.ErrBadEventID},
		{name: "an underscore after the prefix", body: "id=tr_d0b0_E3EA3v", wantErr: provider.ErrBadEventID},
		{name: "a '#' that would split the key", body: "id=tr_d0b0E3EA3v%23paid", wantErr: provider.ErrBadEventID},
		{name: "a path that would leave /v2/payments/", body: "id=tr_..%2F..%2Fcustomers", wantErr: provider.ErrBadEventID},
		{name: "non-ASCII", body: "id=tr_d0b0%C3%A9", wantErr: provider.ErrBadEventID},
		{name: "JSON, not a form", body: `{"id":"tr_d0b0E3EA3v"}`, wantErr: provider.ErrNoEventID},
		{name: "bad percent-encoding", body: "id=tr_%zz", wantErr: provider.ErrBadEventID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mollie.Verifier{}.Verify(context.Background(), webhook.Request{Method: "POST", Body: []byte(tt.body)})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !errors.Is(err, webhook.ErrMalformed) {
					t.Fatalf("Verify error = %v, want %v (malformed: 400)", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("Verify returned events with an error: %v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := []webhook.Event{{Provider: "mollie", ID: tt.wantID, Type: "notification", Raw: []byte(`{"id":"` + tt.wantID + `"}`), IDOnly: true}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotifyIsWhatVerifyAccepts(t *testing.T) {
	body, header := mollie.Notify("tr_5B8cwPMGnU6qLbRvo7qEZo")
	// Mollie's documented example: Content-Length 28.
	if got, want := string(body), "id=tr_5B8cwPMGnU6qLbRvo7qEZo"; got != want || len(body) != 28 {
		t.Errorf("body = %q (%d bytes), want Mollie's %q (28)", got, len(body), want)
	}
	evs, err := mollie.Verifier{}.Verify(context.Background(), webhook.Request{Method: "POST", Header: header, Body: body})
	if err != nil || len(evs) != 1 || evs[0].Key() != "mollie#tr_5B8cwPMGnU6qLbRvo7qEZo" {
		t.Errorf("Verify(Notify) = %v, %v; want the key mollie#tr_5B8cwPMGnU6qLbRvo7qEZo", evs, err)
	}
}
