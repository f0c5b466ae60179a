package verify

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// StandardProvider is the Provider of every event Standard.Verify returns.
const StandardProvider = "standard"

// StandardTolerance is how far a Standard Webhooks timestamp may be from
// now, either way: the specification's five minutes.
const StandardTolerance = 5 * time.Minute

// Standard verifies Standard Webhooks deliveries (Svix and the senders
// that follow the specification): webhook-signature holds space-separated
// "v1,<base64>" signatures, each the HMAC-SHA256 of
// "<webhook-id>.<webhook-timestamp>.<body>" under the base64 key of a
// "whsec_" secret, and any one of them matching any secret is enough.
// Svix's own svix-id, svix-timestamp and svix-signature headers are read
// when the webhook- ones are absent. The key is standard#<webhook-id>, the
// type the body's "type". Safe for concurrent use.
type Standard struct {
	Secrets []string // "whsec_<base64>" (the prefix may be left off); several while rotating
	// Tolerance is how far webhook-timestamp may be from now; zero means
	// StandardTolerance.
	Tolerance time.Duration
	Now       func() time.Time // nil means time.Now
}

// Validate reports a configuration that cannot verify anything: no secret,
// or one that is not base64. The error names no secret.
func (s *Standard) Validate() error {
	_, err := s.keys()
	return err
}

func (s *Standard) keys() ([][]byte, error) {
	if err := checkSecrets(StandardProvider, s.Secrets); err != nil {
		return nil, err
	}
	keys := make([][]byte, 0, len(s.Secrets))
	for i, secret := range s.Secrets {
		k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(strings.TrimSpace(secret), "whsec_"))
		if err != nil || len(k) == 0 {
			return nil, fmt.Errorf("standard verifier: secret %d is not whsec_ and base64", i)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// Verify implements the receiver's verifier. 401: no signature header, no
// v1 signature, no matching one, a timestamp that is not a Unix time or
// more than the tolerance from now (ErrStale, ErrFuture). 400, only once
// signed: no or implausible webhook-id, a body that is not a JSON object.
func (s *Standard) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	keys, err := s.keys()
	if err != nil {
		return nil, err
	}
	id, ts, header := standardHeader(r, "id"), standardHeader(r, "timestamp"), standardHeader(r, "signature")
	var sigs [][]byte
	for part := range strings.FieldsSeq(header) {
		version, value, ok := strings.Cut(part, ",")
		if !ok || version != "v1" {
			continue // another scheme (v1a is asymmetric), or garbage
		}
		if sig, err := base64.StdEncoding.DecodeString(value); err == nil {
			sigs = append(sigs, sig)
		}
	}
	if len(sigs) == 0 {
		return nil, fmt.Errorf("standard: no v1 signature in webhook-signature: %w", ErrNoSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("standard: webhook-timestamp is not a Unix time: %w", ErrNoSignature)
	}
	var want [][]byte
	for _, k := range keys {
		want = append(want, hmacSHA256(k, []byte(id), []byte("."), []byte(ts), []byte("."), r.Body))
	}
	if !anyEqual(sigs, want) {
		return nil, fmt.Errorf("standard: none of %d v1 signatures matches any of %d secrets: %w", len(sigs), len(keys), ErrBadSignature)
	}
	if err := s.checkTimestamp(time.Unix(sec, 0)); err != nil {
		return nil, err
	}
	if err := eventID(StandardProvider, "webhook-id", id); err != nil {
		return nil, err
	}
	if err := jsonObject(StandardProvider, r.Body); err != nil {
		return nil, err
	}
	var head struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(r.Body, &head); err != nil {
		return nil, fmt.Errorf("standard: cannot decode %d-byte body: %w", len(r.Body), ErrNotJSON)
	}
	typ, _ := head.Type.(string)
	return []webhook.Event{{Provider: StandardProvider, ID: id, Type: typ, Created: time.Unix(sec, 0).UTC(), Raw: r.Body}}, nil
}

// standardHeader returns webhook-<name>, or svix-<name> when that is absent.
func standardHeader(r webhook.Request, name string) string {
	if v := strings.TrimSpace(r.Header["webhook-"+name]); v != "" {
		return v
	}
	return strings.TrimSpace(r.Header["svix-"+name])
}

func (s *Standard) checkTimestamp(signed time.Time) error {
	tolerance := s.Tolerance
	if tolerance <= 0 {
		tolerance = StandardTolerance
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	switch {
	case signed.Before(now.Add(-tolerance)):
		return fmt.Errorf("standard: timestamp is %s old, tolerance %s: %w", now.Sub(signed).Round(time.Second), tolerance, ErrStale)
	case signed.After(now.Add(tolerance)):
		return fmt.Errorf("standard: timestamp is %s ahead, tolerance %s: %w", signed.Sub(now).Round(time.Second), tolerance, ErrFuture)
	}
	return nil
}
