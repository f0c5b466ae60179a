package stripe

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Name is the provider's name: the Provider of every event it verifies.
const Name = "stripe"

// defaultTolerance is the tolerance of a verifier with none set:
// 300s, as stripe-go's webhook.DefaultTolerance.
const defaultTolerance = 300 * time.Second

// verifier verifies Stripe webhook deliveries (Provider.Verifier). Its
// fields are read, never written, so one verifier is safe for concurrent
// use.
type verifier struct {
	// Secrets are the endpoint signing secrets ("whsec_...") currently
	// accepted: during a rotation the old and the new one. At least one;
	// an empty secret is never used.
	Secrets []string

	// Tolerance is how far the signed timestamp may be from now, in the
	// past (a replay) and in the future (a skewed clock). A timestamp
	// exactly Tolerance away is accepted. Zero means
	// defaultTolerance; negative is a configuration error.
	Tolerance time.Duration

	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Validate reports a configuration that cannot verify anything: no secret,
// an empty secret, a negative tolerance. The error names no secret.
func (s *verifier) Validate() error {
	var problems []string
	if len(s.Secrets) == 0 {
		problems = append(problems, "no signing secret")
	}
	for i, secret := range s.Secrets {
		if strings.TrimSpace(secret) == "" {
			problems = append(problems, fmt.Sprintf("signing secret %d is empty", i))
		}
	}
	if s.Tolerance < 0 {
		problems = append(problems, fmt.Sprintf("tolerance %s is negative", s.Tolerance))
	}
	if len(problems) > 0 {
		return fmt.Errorf("stripe verifier: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Verify implements provider.Verifier: the one event of r, signed in
// its Stripe-Signature header (verifyHeader).
func (s *verifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	ev, err := s.verifyHeader(r.Header["stripe-signature"], r.Body)
	if err != nil {
		return nil, err
	}
	return []webhook.Event{ev}, nil
}

// verifyHeader checks the Stripe-Signature header value signatureHeader over the
// exact raw body and only then parses the event's id, type, created and
// livemode. It returns the event with Provider "stripe" and Raw set to body
// (the same slice, not a copy).
//
// Checks run in this order, and the first failure is returned:
//
//  1. the configuration (see Validate): an error that wraps no webhook
//     kind, because it is ours to fix, not the sender's;
//  2. the header: ErrNoSignature when it is empty, has no t=, or has no v1
//     signature (a header with only v0 signatures is ErrNoSignature: v0 is
//     not a scheme we accept);
//  3. the signature: ErrBadSignature unless some v1 signature equals the
//     HMAC-SHA256 of "<t>.<body>" under some secret;
//  4. the timestamp against Now: ErrStale when older than Tolerance,
//     ErrFuture when further ahead than Tolerance;
//  5. the body: ErrNotJSON, ErrNotEvent, ErrNoEventID, ErrBadEventID.
//
// Unlike stripe-go's ConstructEvent, it accepts events of any
// api_version: it reads only fields that every version has.
func (s *verifier) verifyHeader(signatureHeader string, body []byte) (webhook.Event, error) {
	if err := s.Validate(); err != nil {
		return webhook.Event{}, err
	}
	h, err := parseStripeHeader(signatureHeader)
	if err != nil {
		return webhook.Event{}, err
	}
	if !s.matches(h, body) {
		return webhook.Event{}, fmt.Errorf("stripe signature: none of %d v1 signatures matches any of %d secrets: %w",
			len(h.signatures), len(s.Secrets), provider.ErrBadSignature)
	}
	if err := s.checkTimestamp(h.timestamp); err != nil {
		return webhook.Event{}, err
	}
	return ParseEvent(body)
}

// stripeHeader is a parsed Stripe-Signature header.
type stripeHeader struct {
	timestamp  time.Time
	signatures [][]byte // v1 signatures, each sha256.Size bytes
}

// parseStripeHeader parses "t=1495999758,v1=ABC,v1=DEF,v0=GHI". It is
// stricter than stripe-go's parser where strictness cannot lose a genuine
// delivery (one t=, required) and as lenient elsewhere: unknown schemes and
// v1 values that cannot be a SHA-256 HMAC are ignored, and spaces around
// parts are allowed.
func parseStripeHeader(header string) (stripeHeader, error) {
	var h stripeHeader
	if strings.TrimSpace(header) == "" {
		return h, fmt.Errorf("stripe signature: no Stripe-Signature header: %w", provider.ErrNoSignature)
	}
	haveT := false
	n := 0
	for part := range strings.SplitSeq(header, ",") {
		n++
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, value, ok := strings.Cut(part, "=")
		if !ok {
			return h, fmt.Errorf("stripe signature: header part %d is not key=value: %w", n, provider.ErrNoSignature)
		}
		switch key {
		case "t":
			if haveT {
				return h, fmt.Errorf("stripe signature: header has more than one t=: %w", provider.ErrNoSignature)
			}
			sec, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return h, fmt.Errorf("stripe signature: header t= is not a Unix time: %w", provider.ErrNoSignature)
			}
			h.timestamp, haveT = time.Unix(sec, 0), true
		case "v1":
			sig, err := hex.DecodeString(value)
			if err != nil || len(sig) != sha256.Size {
				continue // cannot match; stripe-go ignores these too
			}
			h.signatures = append(h.signatures, sig)
		}
	}
	if !haveT {
		return h, fmt.Errorf("stripe signature: header has no t= timestamp: %w", provider.ErrNoSignature)
	}
	if len(h.signatures) == 0 {
		return h, fmt.Errorf("stripe signature: header has no v1 signature: %w", provider.ErrNoSignature)
	}
	return h, nil
}

// matches reports whether some signature in h is the v1 signature of body
// under some secret. Every comparison is constant-time.
func (s *verifier) matches(h stripeHeader, body []byte) bool {
	for _, secret := range s.Secrets {
		want := stripeSignature(h.timestamp, body, secret)
		for _, sig := range h.signatures {
			if hmac.Equal(sig, want) {
				return true
			}
		}
	}
	return false
}

// stripeSignature is Stripe's v1 signature: HMAC-SHA256 under the secret
// of "<unix seconds>.<body>". It is stripe-go's webhook.ComputeSignature
// (the tests check them against each other), written here so that the
// receiver does not link stripe-go's API client, which that package
// imports.
func stripeSignature(t time.Time, body []byte, secret string) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	var prefix [24]byte
	mac.Write(append(strconv.AppendInt(prefix[:0], t.Unix(), 10), '.'))
	mac.Write(body)
	return mac.Sum(nil)
}

// checkTimestamp rejects a signed timestamp more than the tolerance away
// from now, either way. Comparing times rather than durations cannot
// overflow, whatever t= says.
func (s *verifier) checkTimestamp(signed time.Time) error {
	tolerance := s.Tolerance
	if tolerance == 0 {
		tolerance = defaultTolerance
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	return provider.CheckTimestamp("stripe signature: timestamp", signed, now, tolerance)
}

// thinObject is the "object" of a thin event notification (an
// event destination with the thin payload style): the notification names
// the event and the object it is about, and the processor fetches both.
const thinObject = "v2.core.event"

// stripeEventHead is the part of a Stripe event hookinbox reads: a
// snapshot event (object "event", created a Unix time) or a thin
// notification (object "v2.core.event", created an RFC 3339 time, the
// related object, and during a snapshot-to-thin migration the id of the
// snapshot event of the same action).
type stripeEventHead struct {
	ID            string          `json:"id"`
	Object        string          `json:"object"`
	Type          string          `json:"type"`
	Created       json.RawMessage `json:"created"`
	Livemode      bool            `json:"livemode"`
	SnapshotEvent *string         `json:"snapshot_event"`
	RelatedObject *struct {
		URL string `json:"url"`
	} `json:"related_object"`
}

// ParseEvent decodes a Stripe event that is authentic already: a
// webhook body its verifier has verified, or the detail of an event Amazon
// EventBridge delivered from Stripe's partner event source. It returns the
// event with Provider "stripe" and Raw set to body, or ErrNotJSON,
// ErrNotEvent, ErrNoEventID or ErrBadEventID. Its errors describe where
// the body went wrong, never what it holds.
//
// A thin notification is claimed under its snapshot_event when it has one
// (the snapshot event of the same action: Stripe's idempotency key for a
// migration that runs both destinations), else under its own id; its type
// loses the "v1." prefix, so it routes and counts as the snapshot event
// does ("v1.checkout.session.completed" is "checkout.session.completed").
func ParseEvent(body []byte) (webhook.Event, error) {
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return webhook.Event{}, fmt.Errorf("stripe event: %d-byte body: %w", len(body), provider.ErrNotJSON)
	}
	var head stripeEventHead
	if err := json.Unmarshal(body, &head); err != nil {
		var syntaxErr *json.SyntaxError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntaxErr):
			return webhook.Event{}, fmt.Errorf("stripe event: syntax error at byte %d: %w", syntaxErr.Offset, provider.ErrNotJSON)
		case errors.As(err, &typeErr) && (typeErr.Field == "id" || typeErr.Field == "snapshot_event"):
			return webhook.Event{}, fmt.Errorf("stripe event: %s is a JSON %s, not a string: %w", typeErr.Field, typeErr.Value, provider.ErrBadEventID)
		case errors.As(err, &typeErr):
			return webhook.Event{}, fmt.Errorf("stripe event: field %q is a JSON %s, not %s: %w", typeErr.Field, typeErr.Value, typeErr.Type, provider.ErrNotEvent)
		default:
			return webhook.Event{}, fmt.Errorf("stripe event: cannot decode %d-byte body: %w", len(body), provider.ErrNotJSON)
		}
	}
	thin := head.Object == thinObject
	if err := checkStripeID("id", head.ID); err != nil {
		return webhook.Event{}, err
	}
	switch {
	case head.Object != "" && head.Object != "event" && !thin:
		return webhook.Event{}, fmt.Errorf("stripe event: object is neither \"event\" nor %q: %w", thinObject, provider.ErrNotEvent)
	case head.Type == "":
		return webhook.Event{}, fmt.Errorf("stripe event: no type: %w", provider.ErrNotEvent)
	}
	created, err := stripeCreated(head.Created, thin)
	if err != nil {
		return webhook.Event{}, err
	}
	ev := webhook.Event{
		Provider: Name,
		ID:       head.ID,
		Type:     head.Type,
		Created:  created,
		Livemode: head.Livemode,
		Raw:      body,
	}
	if !thin {
		return ev, nil
	}
	if head.SnapshotEvent != nil {
		if err := checkStripeID("snapshot_event", *head.SnapshotEvent); err != nil {
			return webhook.Event{}, err
		}
		ev.ID = *head.SnapshotEvent
	}
	if head.RelatedObject != nil && !apiPath(head.RelatedObject.URL) {
		return webhook.Event{}, fmt.Errorf("stripe event: related_object.url is not a Stripe API path: %w", provider.ErrNotEvent)
	}
	ev.Type = snapshotType(head.Type)
	return ev, nil
}

// snapshotType returns the snapshot type of a thin event's type:
// "v1.customer.created" is "customer.created"; a type of an API v2
// resource ("v2.core.account.created") is its own.
func snapshotType(thinType string) string {
	return strings.TrimPrefix(thinType, "v1.")
}

// apiPath reports whether p can be a Stripe API object path, as a
// thin event's related_object.url is ("/v1/customers/cus_..."): /v1/ or
// /v2/ and then letters, digits, '_', '-', '.' and '/', with no "..".
func apiPath(p string) bool {
	if !strings.HasPrefix(p, "/v1/") && !strings.HasPrefix(p, "/v2/") || strings.Contains(p, "..") || strings.Contains(p, "//") {
		return false
	}
	for _, c := range p {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}

// checkStripeID checks an event id field: present and a valid event id.
func checkStripeID(field, id string) error {
	switch {
	case id == "":
		if field == "id" {
			return fmt.Errorf("stripe event: %w", provider.ErrNoEventID)
		}
		return fmt.Errorf("stripe event: %s is empty: %w", field, provider.ErrBadEventID)
	case webhook.ValidateEventID(id) != nil:
		// ValidateEventID's message quotes the offending character; say
		// only what is wrong, not what the sender wrote.
		if len(id) > webhook.MaxEventIDLen {
			return fmt.Errorf("stripe event: %s is %d bytes, more than %d: %w", field, len(id), webhook.MaxEventIDLen, provider.ErrBadEventID)
		}
		return fmt.Errorf("stripe event: %s has characters other than letters, digits, '_' and '-': %w", field, provider.ErrBadEventID)
	}
	return nil
}

// stripeCreated reads created: a Unix time in a snapshot event, an RFC
// 3339 time in a thin notification; absent (or null) is the zero time.
func stripeCreated(raw json.RawMessage, thin bool) (time.Time, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, nil
	}
	if thin {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return time.Time{}, fmt.Errorf("stripe event: created is not a string: %w", provider.ErrNotEvent)
		}
		t, err := time.Parse(time.RFC3339Nano, text)
		if err != nil {
			return time.Time{}, fmt.Errorf("stripe event: created is not an RFC 3339 time: %w", provider.ErrNotEvent)
		}
		return t.UTC(), nil
	}
	var sec int64
	if err := json.Unmarshal(raw, &sec); err != nil {
		return time.Time{}, fmt.Errorf("stripe event: field \"created\" is a JSON %s, not int64: %w", jsonKind(raw), provider.ErrNotEvent)
	}
	if sec == 0 {
		return time.Time{}, nil
	}
	return time.Unix(sec, 0).UTC(), nil
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	}
	return "number"
}
