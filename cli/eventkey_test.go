package cli

import (
	"context"
	"errors"
	"testing"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// keyStore holds the keys of an inbox.
type keyStore map[webhook.Key]bool

func (s keyStore) Get(_ context.Context, k webhook.Key) (inbox.Item, error) {
	if !s[k] {
		return inbox.Item{}, inbox.ErrNotFound
	}
	return inbox.Item{Key: k}, nil
}

// TestBareEventIDsAreLookedUpUnderEveryProvider: inspect and replay take a
// bare event id as the key of the one provider the inbox holds it under,
// whichever provider of the registry that is; none, or more than one, is
// an error that asks for the key.
func TestBareEventIDsAreLookedUpUnderEveryProvider(t *testing.T) {
	store := keyStore{"stripe#evt_1": true, "github#d-1": true, "github#both": true, "shopify#both": true}
	for _, tc := range []struct {
		in      string
		want    webhook.Key
		wantErr bool
	}{
		{"evt_1", "stripe#evt_1", false},
		{"d-1", "github#d-1", false},
		{"mollie#tr_1", "mollie#tr_1", false}, // a key is taken as it is
		{"nowhere", "", true},
		{"both", "", true},
		{"bad id", "", true},
	} {
		got, err := eventKey(context.Background(), store, tc.in, testApp().providers().Names())
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("eventKey(%q) = %q, %v; want %q (error: %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
	var ue *usageError
	if _, err := eventKey(context.Background(), store, "bad id", testApp().providers().Names()); !errors.As(err, &ue) {
		t.Errorf("a malformed id: %v, want a usage error", err)
	}
}
