package verify

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/hookinbox/hookinbox/webhook"
)

// GoPayProvider is the Provider of every event GoPay.Verify returns.
const GoPayProvider = "gopay"

// GoPayNotification is the Type of every event GoPay.Verify returns; the
// processor replaces it with the payment state it fetches.
const GoPayNotification = "notification"

// MaxGoPayIDLen bounds a GoPay payment id: an int64 has at most 19 digits.
const MaxGoPayIDLen = 19

// GoPay accepts GoPay's payment notifications, GET ...?id=<payment id>.
// Nothing in them is signed, so nothing in them is trusted: Verify only
// checks that the id is a plausible payment id (1 to 19 ASCII digits) and
// returns an IDOnly event keyed gopay#<id>; the processor fetches the
// payment's state from GoPay's API with the client credentials. It never
// calls out itself, so a caller cannot make the receiver do more than one
// conditional write per request. Safe for concurrent use.
type GoPay struct{}

// Verify implements the receiver's verifier: 400 for a missing, repeated
// or implausible id.
func (GoPay) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	id := r.Query["id"]
	if err := GoPayID(id); err != nil {
		return nil, err
	}
	return []webhook.Event{{
		Provider: GoPayProvider,
		ID:       id,
		Type:     GoPayNotification,
		Raw:      []byte(`{"id":` + id + `}`),
		IDOnly:   true,
	}}, nil
}

// GoPayID reports, as ErrNoEventID or ErrBadEventID, an id that cannot be
// a GoPay payment id.
func GoPayID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("gopay: no id parameter: %w", ErrNoEventID)
	case len(id) > MaxGoPayIDLen:
		return fmt.Errorf("gopay: id is %d characters, more than %d: %w", len(id), MaxGoPayIDLen, ErrBadEventID)
	case strings.TrimLeft(id, "0123456789") != "" || id[0] == '0':
		return fmt.Errorf("gopay: id is not a positive decimal number: %w", ErrBadEventID)
	}
	return nil
}

// GoPayMethod is how GoPay notifies.
const GoPayMethod = http.MethodGet
