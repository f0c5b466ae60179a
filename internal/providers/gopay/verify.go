package gopay

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Name is the Provider of every event Verifier.Verify returns.
const Name = "gopay"

// Notification is the Type of every event Verifier.Verify returns; the
// processor replaces it with the payment state it fetches.
const Notification = "notification"

// maxIDLen bounds a GoPay payment id: GoPay's API types payment ids
// as 64-bit signed integers (long), whose largest, 2^63-1, has 19 digits.
const maxIDLen = 19

// verifier accepts GoPay's payment notifications, GET ...?id=<payment id>.
// Nothing in them is signed, so nothing in them is trusted: Verify only
// checks that the id is one GoPay can issue (a positive int64 written in
// ASCII digits, without leading zeros) and returns an IDOnly event keyed gopay#<id>; the processor fetches the
// payment's state from GoPay's API with the client credentials. It never
// calls out itself, so a caller cannot make the receiver do more than one
// conditional write per request. Safe for concurrent use.
type verifier struct{}

// Verify implements the receiver's verifier: 400 for a missing, repeated
// or implausible id.
func (verifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	id := r.Query["id"]
	if err := checkID(id); err != nil {
		return nil, err
	}
	return []webhook.Event{{
		Provider: Name,
		ID:       id,
		Type:     Notification,
		Raw:      []byte(`{"id":` + id + `}`),
		IDOnly:   true,
	}}, nil
}

// checkID reports, as ErrNoEventID or ErrBadEventID, an id that cannot be
// a GoPay payment id: empty, longer than maxIDLen, anything but ASCII
// digits, a leading zero (GoPay writes none, and 0123 would be another key
// for payment 123), zero, or above 2^63-1.
func checkID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("gopay: no id parameter: %w", provider.ErrNoEventID)
	case len(id) > maxIDLen:
		return fmt.Errorf("gopay: id is %d characters, more than %d: %w", len(id), maxIDLen, provider.ErrBadEventID)
	case strings.TrimLeft(id, "0123456789") != "" || id[0] == '0':
		return fmt.Errorf("gopay: id is not a positive decimal number without leading zeros: %w", provider.ErrBadEventID)
	}
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return fmt.Errorf("gopay: id is above 2^63-1, more than a GoPay payment id holds: %w", provider.ErrBadEventID)
	}
	return nil
}

// method is how GoPay notifies.
const method = http.MethodGet
