// Package paddle is everything hookinbox knows about Paddle Billing: how a
// notification is verified (the Paddle-Signature header), its event key
// (paddle#<event_id>) and type (event_type), and how a test delivery is
// signed.
//
// Guarantees: nothing is parsed before the signature matched over the raw
// body; signatures are compared in constant time; several secrets and
// several h1 signatures are accepted, so a secret rotates without losing a
// delivery; the signed timestamp must be within the tolerance of an
// injected clock. A verifier holds no mutable state and is safe for
// concurrent use.
package paddle

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Name is the provider's path segment and the prefix of its keys.
const Name = "paddle"

// signatureHeader is the header Paddle signs its notifications in, lower
// case as API Gateway gives it.
const signatureHeader = "paddle-signature"

// defaultTolerance is how far the signed timestamp may be from now when
// verifier.Tolerance is zero.
const defaultTolerance = 300 * time.Second

// verifier verifies Paddle Billing notifications. Its fields are read,
// never written.
type verifier struct {
	// Secrets are the notification destination's secret keys
	// ("pdl_ntfset_..."): during a rotation the old and the new one.
	Secrets []string
	// Tolerance is how far ts may be from now, either way; a timestamp
	// exactly Tolerance away is accepted. Zero means 300 s.
	Tolerance time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Validate reports a configuration that cannot verify anything: no secret,
// an empty secret, a negative tolerance. The error names no secret.
func (v *verifier) Validate() error {
	if v.Tolerance < 0 {
		return fmt.Errorf("paddle verifier: tolerance %s is negative", v.Tolerance)
	}
	return provider.CheckSecrets(Name, v.Secrets)
}

// Verify checks Paddle-Signature over the exact raw body, then the signed
// timestamp, and only then reads event_id, event_type and occurred_at. It
// returns one event keyed paddle#<event_id> with Raw set to the body.
// Errors wrap provider's sentinels: ErrNoSignature (no header, no ts, no
// h1), ErrBadSignature, ErrStale, ErrFuture, ErrNotJSON, ErrNotEvent,
// ErrNoEventID, ErrBadEventID.
func (v *verifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	ts, sigs, err := parseHeader(r.Header[signatureHeader])
	if err != nil {
		return nil, err
	}
	if !v.matches(ts, sigs, r.Body) {
		return nil, fmt.Errorf("paddle signature: none of %d h1 signatures matches any of %d secrets: %w", len(sigs), len(v.Secrets), provider.ErrBadSignature)
	}
	if err := v.checkTimestamp(ts); err != nil {
		return nil, err
	}
	ev, err := parse(r.Body)
	if err != nil {
		return nil, err
	}
	return []webhook.Event{ev}, nil
}

// parseHeader parses "ts=1671552777;h1=<hex>[;h1=<hex>...]": exactly one
// ts, at least one h1. Unknown keys are ignored, and so are h1 values that
// cannot be a SHA-256 HMAC in hex.
func parseHeader(header string) (ts string, sigs [][]byte, err error) {
	if strings.TrimSpace(header) == "" {
		return "", nil, fmt.Errorf("paddle signature: no Paddle-Signature header: %w", provider.ErrNoSignature)
	}
	for part := range strings.SplitSeq(header, ";") {
		key, value, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch key {
		case "ts":
			if ts != "" {
				return "", nil, fmt.Errorf("paddle signature: more than one ts: %w", provider.ErrNoSignature)
			}
			if _, perr := strconv.ParseInt(value, 10, 64); perr != nil || value[0] == '-' || value[0] == '+' {
				return "", nil, fmt.Errorf("paddle signature: ts is not a Unix time: %w", provider.ErrNoSignature)
			}
			ts = value
		case "h1":
			if sig, derr := hex.DecodeString(value); derr == nil && len(sig) == sha256.Size {
				sigs = append(sigs, sig)
			}
		}
	}
	switch {
	case ts == "":
		return "", nil, fmt.Errorf("paddle signature: no ts: %w", provider.ErrNoSignature)
	case len(sigs) == 0:
		return "", nil, fmt.Errorf("paddle signature: no h1 signature: %w", provider.ErrNoSignature)
	}
	return ts, sigs, nil
}

// matches reports whether some h1 is the signature of body at ts under
// some secret, comparing every pair in constant time.
func (v *verifier) matches(ts string, sigs [][]byte, body []byte) bool {
	want := make([][]byte, len(v.Secrets))
	for i, secret := range v.Secrets {
		want[i] = mac(secret, ts, body)
	}
	return provider.AnyEqual(sigs, want)
}

// mac is Paddle's h1: the HMAC-SHA256 of "<ts>:<body>" under the secret.
func mac(secret, ts string, body []byte) []byte {
	return provider.HMACSHA256([]byte(secret), []byte(ts+":"), body)
}

// checkTimestamp refuses a ts further than the tolerance from now.
func (v *verifier) checkTimestamp(ts string) error {
	sec, _ := strconv.ParseInt(ts, 10, 64) // parseHeader checked it
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	return provider.CheckTimestamp("paddle signature: ts", time.Unix(sec, 0), now, cmp.Or(v.Tolerance, defaultTolerance))
}

// parse reads an authentic Paddle event: event_id (the key), event_type
// (the type) and occurred_at. Its errors say where the body went wrong,
// never what it holds.
func parse(body []byte) (webhook.Event, error) {
	if err := provider.CheckJSONObject("paddle event", body); err != nil {
		return webhook.Event{}, err
	}
	var head struct {
		EventID    *string `json:"event_id"`
		EventType  *string `json:"event_type"`
		OccurredAt *string `json:"occurred_at"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return webhook.Event{}, fmt.Errorf("paddle event: event_id, event_type and occurred_at must be strings in a JSON object: %w", provider.ErrNotEvent)
	}
	switch {
	case head.EventID == nil || *head.EventID == "":
		return webhook.Event{}, fmt.Errorf("paddle event: no event_id: %w", provider.ErrNoEventID)
	case webhook.ValidateEventID(*head.EventID) != nil:
		return webhook.Event{}, fmt.Errorf("paddle event: event_id is longer than %d bytes or has characters other than letters, digits, '_' and '-': %w", webhook.MaxEventIDLen, provider.ErrBadEventID)
	case head.EventType == nil || *head.EventType == "":
		return webhook.Event{}, fmt.Errorf("paddle event: no event_type: %w", provider.ErrNotEvent)
	}
	ev := webhook.Event{Provider: Name, ID: *head.EventID, Type: *head.EventType, Raw: body}
	if head.OccurredAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *head.OccurredAt)
		if err != nil {
			return webhook.Event{}, fmt.Errorf("paddle event: occurred_at is not an RFC 3339 time: %w", provider.ErrNotEvent)
		}
		ev.Created = t.UTC()
	}
	return ev, nil
}
