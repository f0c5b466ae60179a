package processor

import (
	"errors"
	"fmt"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// errOtherMode is wrapped by the error of an event whose mode (Stripe's
// livemode, Adyen's live) is not the deployment's (Config.Live): a
// test-mode event on a live deployment, or a live one on a test
// deployment. Such an event ends IGNORED with the reason, counted in
// OtherMode, and the business never sees it.
var errOtherMode = errors.New("an event of the other mode")

// checkMode returns an error wrapping errOtherMode when the claimed
// event's mode is not the one the deployment runs for its provider. The
// mode was read from the verified body when the event was claimed; a
// provider Config.Live does not name is not checked.
func (h *Handler) checkMode(key webhook.Key, it inbox.Item) error {
	live, checked := h.cfg.Live[key.Provider()]
	if !checked || it.Livemode == live {
		return nil
	}
	return fmt.Errorf("%s is a %s event on a %s deployment: %w", key, modeName(it.Livemode), modeName(live), errOtherMode)
}

func modeName(live bool) string {
	if live {
		return "live-mode"
	}
	return "test-mode"
}
