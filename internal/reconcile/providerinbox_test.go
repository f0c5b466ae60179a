package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestProviderInbox: a source sees whether an event is claimed, and may
// claim again an event with no claim, never one whose claim is not held.
func TestProviderInbox(t *testing.T) {
	ctx := context.Background()
	store := inboxtest.NewMemory()
	in := reconcile.ProviderInbox(store)
	ev := webhook.Event{Provider: "gopay", ID: "3000000001", Type: "notification", Raw: []byte(`{"id":3000000001}`), IDOnly: true}
	if claimed, err := in.Claimed(ctx, ev.Key()); claimed || err != nil {
		t.Errorf("Claimed before the claim = %v, %v; want false", claimed, err)
	}
	if free, err := in.EndHold(ctx, ev.Key()); !free || err != nil {
		t.Errorf("EndHold with no claim = %v, %v; want true", free, err)
	}
	if _, err := store.Claim(ctx, inbox.Claim{Event: ev, At: time.Now(), TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if claimed, err := in.Claimed(ctx, ev.Key()); !claimed || err != nil {
		t.Errorf("Claimed after the claim = %v, %v; want true", claimed, err)
	}
	if free, err := in.EndHold(ctx, ev.Key()); free || err != nil {
		t.Errorf("EndHold of a claim not held = %v, %v; want false", free, err)
	}
}
