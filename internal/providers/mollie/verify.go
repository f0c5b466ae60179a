// Package mollie is everything hookinbox knows about Mollie's payment
// webhooks: the notification (a form POST "id=tr_..." signed by nobody),
// which ids are Mollie's, how the payment is fetched from Mollie's API, and
// how a test notification is sent.
//
// Nothing in a notification is trusted: verifier only checks that the id
// is one Mollie can issue and returns an id-only event keyed
// mollie#<payment id>; it never calls out, so a caller cannot make the
// receiver do more than one conditional write. The processor fetches the
// payment with the API key on every attempt. Safe for concurrent use.
package mollie

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Name is the provider's path segment and the prefix of its keys.
const Name = "mollie"

// Notification is the type of every event verifier returns: the payment's
// status is known only once it is fetched. The business sees the
// fetched payment's status as the type (Status).
const Notification = "notification"

// Status returns the status of a payment as Mollie's API serves it (open,
// canceled, pending, authorized, expired, failed, paid), the type of its
// event once fetched; "" for anything else.
func Status(payment []byte) string {
	var p struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(payment, &p) != nil {
		return ""
	}
	return p.Status
}

// maxIDLen is the longest id Mollie issues, its prefix included.
const maxIDLen = 32

// paymentPrefix starts every Mollie payment id.
const paymentPrefix = "tr_"

// verifier accepts Mollie's payment notifications.
type verifier struct{}

// Verify reads the form body's id and returns the id-only event of that
// payment; an id missing, repeated or not a payment id Mollie can issue is
// ErrNoEventID or ErrBadEventID (400), and nothing is written.
func (verifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	id, err := formID(r.Body)
	if err != nil {
		return nil, err
	}
	return []webhook.Event{{
		Provider: Name,
		ID:       id,
		Type:     Notification,
		Raw:      []byte(`{"id":"` + id + `"}`),
		IDOnly:   true,
	}}, nil
}

// formID returns the one id of an application/x-www-form-urlencoded body.
func formID(body []byte) (string, error) {
	if len(body) > 4*maxIDLen {
		return "", fmt.Errorf("mollie: %d-byte body, more than a notification holds: %w", len(body), provider.ErrBadEventID)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return "", fmt.Errorf("mollie: body is not a form: %w", provider.ErrBadEventID)
	}
	ids := form["id"]
	switch {
	case len(ids) == 0:
		return "", fmt.Errorf("mollie: no id parameter: %w", provider.ErrNoEventID)
	case len(ids) > 1:
		return "", fmt.Errorf("mollie: %d id parameters: %w", len(ids), provider.ErrBadEventID)
	}
	return ids[0], checkID(ids[0])
}

// checkID reports, as ErrNoEventID or ErrBadEventID, an id that cannot be
// a Mollie payment id: "tr_" and then ASCII letters and digits, at most
// maxIDLen in all.
func checkID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("mollie: empty id: %w", provider.ErrNoEventID)
	case len(id) > maxIDLen:
		return fmt.Errorf("mollie: id is %d characters, more than %d: %w", len(id), maxIDLen, provider.ErrBadEventID)
	case len(id) <= len(paymentPrefix) || id[:len(paymentPrefix)] != paymentPrefix:
		return fmt.Errorf("mollie: id is not a payment id (tr_...): %w", provider.ErrBadEventID)
	}
	for _, c := range []byte(id[len(paymentPrefix):]) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return fmt.Errorf("mollie: id has characters other than letters and digits after tr_: %w", provider.ErrBadEventID)
		}
	}
	return nil
}

// notify returns the body and headers Mollie notifies payment id with.
func notify(id string) ([]byte, map[string]string) {
	return []byte(url.Values{"id": {id}}.Encode()), map[string]string{
		"content-type": "application/x-www-form-urlencoded",
		"user-agent":   "Mollie HTTP client/1.0",
	}
}
