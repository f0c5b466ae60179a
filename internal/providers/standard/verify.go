package standard

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Name is the Provider of every event Verifier.Verify returns.
const Name = "standard"

// defaultTolerance is how far a Standard Webhooks timestamp may be from
// now, either way: the specification's five minutes.
const defaultTolerance = 5 * time.Minute

// maxV1a is the most v1a signatures one webhook-signature header
// may carry. Each costs an ed25519 verification per public key (tens of
// microseconds, where a v1 signature costs a comparison), and a sender
// signs once per key it is rolling: more is refused before any is checked,
// so one request cannot buy much CPU.
const maxV1a = 8

// Verifier verifies Standard Webhooks deliveries (Svix and the senders
// that follow the specification): webhook-signature holds space-separated
// signatures of "<webhook-id>.<webhook-timestamp>.<body>", each
// "<scheme>,<base64>":
//
//   - v1, the HMAC-SHA256 under the base64 key of a "whsec_" secret
//     (symmetric: the sender holds the same secret);
//   - v1a, the ed25519 signature under the private key whose public key
//     is a "whpk_" secret (asymmetric: the receiver holds only the public
//     key, which cannot sign).
//
// Any one signature matching any secret is enough, so a sender may sign
// with several keys of either scheme while rotating, and Secrets may list
// both kinds. Svix's own svix-id, svix-timestamp and svix-signature headers
// are read when the webhook- ones are absent. The key is
// standard#<webhook-id>, the type the body's "type". Safe for concurrent
// use.
type Verifier struct {
	// Secrets are "whsec_<base64 key>" (the prefix may be left off) and
	// "whpk_<base64 ed25519 public key>"; several while rotating.
	Secrets []string
	// Tolerance is how far webhook-timestamp may be from now; zero means
	// defaultTolerance.
	Tolerance time.Duration
	Now       func() time.Time // nil means time.Now
}

// Validate reports a configuration that cannot verify anything: no secret,
// one that is not base64, a whpk_ that is not an ed25519 public key, or a
// private signing key (whsk_), which belongs to the sender only. The error
// names no secret.
func (s *Verifier) Validate() error {
	_, err := s.keys()
	return err
}

// standardKeys are the configured secrets by scheme.
type standardKeys struct {
	hmac   [][]byte            // v1: the whsec_ keys
	public []ed25519.PublicKey // v1a: the whpk_ keys
}

func (s *Verifier) keys() (standardKeys, error) {
	var keys standardKeys
	if err := provider.CheckSecrets(Name, s.Secrets); err != nil {
		return keys, err
	}
	for i, secret := range s.Secrets {
		secret = strings.TrimSpace(secret)
		if strings.HasPrefix(secret, "whsk_") {
			return keys, fmt.Errorf("standard verifier: secret %d is a private signing key (whsk_): give the receiver its public key (whpk_) only", i)
		}
		if b64, ok := strings.CutPrefix(secret, "whpk_"); ok {
			k, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || len(k) != ed25519.PublicKeySize {
				return keys, fmt.Errorf("standard verifier: secret %d is whpk_ but not a base64 %d-byte ed25519 public key", i, ed25519.PublicKeySize)
			}
			keys.public = append(keys.public, ed25519.PublicKey(k))
			continue
		}
		k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		if err != nil || len(k) == 0 {
			return keys, fmt.Errorf("standard verifier: secret %d is neither whsec_ nor whpk_ and base64", i)
		}
		keys.hmac = append(keys.hmac, k)
	}
	return keys, nil
}

// Verify implements the receiver's verifier. 401: no signature header, no
// signature of a scheme a secret is configured for (v1 for whsec_, v1a for
// whpk_), more than maxV1a v1a ones, no matching one, a timestamp that is not a Unix time or more
// than the tolerance from now (ErrStale, ErrFuture). 400, only once
// signed: no or implausible webhook-id, a body that is not a JSON object.
func (s *Verifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	keys, err := s.keys()
	if err != nil {
		return nil, err
	}
	id, ts, header := standardHeader(r, "id"), standardHeader(r, "timestamp"), standardHeader(r, "signature")
	var sigs, asigs [][]byte // v1, v1a
	for part := range strings.FieldsSeq(header) {
		scheme, value, ok := strings.Cut(part, ",")
		sig, err := base64.StdEncoding.DecodeString(value)
		switch {
		case !ok || err != nil: // garbage
		case scheme == "v1" && len(keys.hmac) > 0:
			sigs = append(sigs, sig)
		case scheme == "v1a" && len(keys.public) > 0:
			asigs = append(asigs, sig)
		}
	}
	if len(sigs)+len(asigs) == 0 {
		return nil, fmt.Errorf("standard: no %s signature in webhook-signature: %w", keys.schemes(), provider.ErrNoSignature)
	}
	if len(asigs) > maxV1a {
		return nil, fmt.Errorf("standard: webhook-signature has %d v1a signatures, more than %d: %w", len(asigs), maxV1a, provider.ErrNoSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("standard: webhook-timestamp is not a Unix time: %w", provider.ErrNoSignature)
	}
	var want [][]byte
	for _, k := range keys.hmac {
		want = append(want, provider.HMACSHA256(k, []byte(id), []byte("."), []byte(ts), []byte("."), r.Body))
	}
	if !provider.AnyEqual(sigs, want) && !keys.signedByOne(asigs, id+"."+ts+".", r.Body) {
		return nil, fmt.Errorf("standard: none of %d v1 and %d v1a signatures matches any of %d secrets: %w",
			len(sigs), len(asigs), len(s.Secrets), provider.ErrBadSignature)
	}
	if err := s.checkTimestamp(time.Unix(sec, 0)); err != nil {
		return nil, err
	}
	if err := provider.CheckEventID(Name, "webhook-id", id); err != nil {
		return nil, err
	}
	if err := provider.CheckJSONObject(Name, r.Body); err != nil {
		return nil, err
	}
	var head struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(r.Body, &head); err != nil {
		return nil, fmt.Errorf("standard: cannot decode %d-byte body: %w", len(r.Body), provider.ErrNotJSON)
	}
	typ, _ := head.Type.(string)
	return []webhook.Event{{Provider: Name, ID: id, Type: typ, Created: time.Unix(sec, 0).UTC(), Raw: r.Body}}, nil
}

// schemes names the signature schemes the keys verify.
func (k standardKeys) schemes() string {
	switch {
	case len(k.public) == 0:
		return "v1"
	case len(k.hmac) == 0:
		return "v1a"
	}
	return "v1 or v1a"
}

// signedByOne reports whether one of the v1a signatures is an ed25519
// signature of prefix and body under one of the public keys. Nothing
// secret is compared: a public key only verifies.
func (k standardKeys) signedByOne(sigs [][]byte, prefix string, body []byte) bool {
	if len(sigs) == 0 {
		return false
	}
	msg := append([]byte(prefix), body...)
	for _, pub := range k.public {
		for _, sig := range sigs {
			if ed25519.Verify(pub, msg, sig) {
				return true
			}
		}
	}
	return false
}

// standardHeader returns webhook-<name>, or svix-<name> when that is absent.
func standardHeader(r webhook.Request, name string) string {
	if v := strings.TrimSpace(r.Header["webhook-"+name]); v != "" {
		return v
	}
	return strings.TrimSpace(r.Header["svix-"+name])
}

func (s *Verifier) checkTimestamp(signed time.Time) error {
	tolerance := s.Tolerance
	if tolerance <= 0 {
		tolerance = defaultTolerance
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	return provider.CheckTimestamp("standard: timestamp", signed, now, tolerance)
}
