package reconcile

import (
	"context"
	"errors"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// heldStore lists the inbox calls a provider's source makes through
// ProviderInbox.
type heldStore interface {
	Get(ctx context.Context, key webhook.Key) (inbox.Item, error)
	EndHold(ctx context.Context, key webhook.Key) error
}

// ProviderInbox returns store as the providers' reconcile sources ask it
// (provider.Env.Inbox).
func ProviderInbox(store heldStore) provider.Inbox { return providerInbox{store} }

type providerInbox struct{ store heldStore }

func (p providerInbox) Claimed(ctx context.Context, key webhook.Key) (bool, error) {
	_, err := p.store.Get(ctx, key)
	if errors.Is(err, inbox.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (p providerInbox) EndHold(ctx context.Context, key webhook.Key) (bool, error) {
	switch err := p.store.EndHold(ctx, key); {
	case errors.Is(err, inbox.ErrNotHeld):
		return false, nil
	case err == nil || errors.Is(err, inbox.ErrNotFound):
		return true, nil
	default:
		return false, err
	}
}
