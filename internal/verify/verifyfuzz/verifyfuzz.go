// Package verifyfuzz is the fuzz property every webhook verifier and the
// receiver are held to (VerifierFuzz), shared by their fuzz targets. It is
// a test helper package: only _test.go files import it. Its functions are
// safe for concurrent use.
package verifyfuzz

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"

	"github.com/hookinbox/hookinbox/webhook"
)

// Fuzz input modes: how VerifierFuzz.Request turns a fuzz input into the
// request a verifier sees.
const (
	// AsGiven sends the input's header lines and body as they are: the
	// fuzzer's own attempt at a request.
	AsGiven uint8 = iota
	// Signed sends a genuine sender's headers for the body, then the
	// input's header lines on top (a line may replace a genuine header).
	Signed
	// Tampered signs the body genuinely, then changes one of its bytes.
	Tampered
	modes
)

// VerifierFuzz is one provider's part in the fuzz property that every
// verifier and the receiver are held to:
//
//   - no input panics;
//   - a request is accepted only when Genuine, computed here without the
//     verifier's code, says its headers carry a valid signature of its
//     exact body, and the event accepted carries that body byte for byte
//     (or, where the body wraps the event, what Carried says it wraps),
//     the provider's name and an ID that webhook.ValidateEventID accepts;
//   - a refusal is a sender's error (webhook.ErrUnauthenticated or
//     webhook.ErrMalformed, a 4xx), never ours;
//   - a request signed genuinely and left alone is never refused as
//     unauthenticated, and a body changed after signing is always refused.
//
// A provider's fuzz target is then a few lines (see FuzzStripeVerify in
// package verify): build a VerifierFuzz on a fixed clock, Seed it with real
// payloads, and f.Fuzz(fz.Check). The receiver's fuzz target uses Request
// to build its HTTP requests from the same inputs.
type VerifierFuzz struct {
	// Provider is the name the verifier puts on its events ("stripe").
	Provider string
	// Verify runs the verifier under test on headers (lower-case names)
	// and the raw body.
	Verify func(headers map[string]string, body []byte) (webhook.Event, error)
	// Sign returns the headers a genuine sender attaches to body.
	Sign func(body []byte) map[string]string
	// Genuine reports whether headers carry a valid, timely signature of
	// body, computed independently of the verifier.
	Genuine func(headers map[string]string, body []byte) bool
	// Carried returns the event a signed body carries, computed without
	// the verifier's code; nil means the body itself (every provider but
	// GitHub's form encoding, see GitHubCarried).
	Carried func(headers map[string]string, body []byte) []byte
}

// Seed adds, for each body, the inputs the fuzzer starts from: the body
// genuinely signed, signed and tampered, sent with its genuine headers
// spelled as lines, and sent with none.
func (fz VerifierFuzz) Seed(f *testing.F, bodies ...[]byte) {
	f.Helper()
	for i, body := range bodies {
		pos := uint16(i*7919 + len(body)/2)
		f.Add("", body, Signed, pos)
		f.Add("", body, Tampered, pos)
		f.Add(HeaderLines(fz.Sign(body)), body, AsGiven, pos)
		f.Add("", body, AsGiven, pos)
	}
}

// Request turns a fuzz input into the headers and body a verifier sees,
// as mode says (see AsGiven, Signed, Tampered; other values fold onto
// them). pos picks the byte Tampered changes.
func (fz VerifierFuzz) Request(lines string, body []byte, mode uint8, pos uint16) (map[string]string, []byte) {
	switch mode % modes {
	case Signed:
		headers := fz.Sign(body)
		for k, v := range ParseHeaderLines(lines) {
			headers[k] = v
		}
		return headers, body
	case Tampered:
		headers := fz.Sign(body)
		if len(body) == 0 {
			return headers, []byte{byte(pos)}
		}
		tampered := bytes.Clone(body)
		tampered[int(pos)%len(tampered)] ^= byte(pos>>8) | 1
		return headers, tampered
	default:
		return ParseHeaderLines(lines), body
	}
}

// Check is the fuzz function: it builds the request from the input, runs
// the verifier and fails t on any break of the property above.
func (fz VerifierFuzz) Check(t *testing.T, lines string, body []byte, mode uint8, pos uint16) {
	headers, sent := fz.Request(lines, body, mode, pos)
	ev, err := fz.Verify(headers, sent)
	if err == nil {
		fz.CheckAccepted(t, headers, sent)
		if ev.Provider != fz.Provider {
			t.Errorf("event provider = %q, want %q", ev.Provider, fz.Provider)
		}
		if err := webhook.ValidateEventID(ev.ID); err != nil {
			t.Errorf("accepted event ID: %v", err)
		}
		want := sent
		if fz.Carried != nil {
			want = fz.Carried(headers, sent)
		}
		if !bytes.Equal(ev.Raw, want) {
			t.Errorf("event Raw is not the event the signed body carries")
		}
	}
	if err != nil && !errors.Is(err, webhook.ErrUnauthenticated) && !errors.Is(err, webhook.ErrMalformed) {
		t.Fatalf("refusal %v is neither unauthenticated nor malformed: the sender would get a 500", err)
	}
	switch mode % modes {
	case Signed:
		if lines == "" && errors.Is(err, webhook.ErrUnauthenticated) {
			t.Fatalf("a genuinely signed request was refused as unauthenticated: %v", err)
		}
	case Tampered:
		if err == nil {
			t.Fatalf("a body changed after signing was accepted as %s", ev.Key())
		}
	}
}

// CheckAccepted fails t unless headers are Genuine for body: call it for
// every request that was accepted. The receiver's fuzz target calls it
// when its handler answered 2xx.
func (fz VerifierFuzz) CheckAccepted(t *testing.T, headers map[string]string, body []byte) {
	t.Helper()
	if !fz.Genuine(headers, body) {
		t.Fatalf("accepted a request that is not genuinely signed: headers %q", headers)
	}
}

// HeaderLines spells headers as the fuzz input's lines: "name: value",
// one per line, in no particular order.
func HeaderLines(headers map[string]string) string {
	var b strings.Builder
	for k, v := range headers {
		b.WriteString(k + ": " + v + "\n")
	}
	return b.String()
}

// ParseHeaderLines reads "name: value" lines (names lower-cased, the value
// trimmed); a line without a colon is a header with an empty value.
func ParseHeaderLines(lines string) map[string]string {
	headers := map[string]string{}
	for line := range strings.SplitSeq(lines, "\n") {
		if line == "" {
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		headers[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	return headers
}

// StripeFuzz is the VerifierFuzz of a Stripe verifier whose clock reads
// now and whose accepted secrets are secrets, with Stripe's 300 s
// tolerance; verify is its Verify.
func StripeFuzz(verify func(header string, body []byte) (webhook.Event, error), now time.Time, secrets ...string) VerifierFuzz {
	const tolerance = 300 * time.Second
	return VerifierFuzz{
		Provider: "stripe",
		Verify: func(headers map[string]string, body []byte) (webhook.Event, error) {
			return verify(headers["stripe-signature"], body)
		},
		Sign: func(body []byte) map[string]string {
			return map[string]string{"stripe-signature": stripe.SignatureHeader(body, now, secrets[0])}
		},
		Genuine: func(headers map[string]string, body []byte) bool {
			return StripeGenuine(headers["stripe-signature"], body, now, tolerance, secrets...)
		},
	}
}

// StripeGenuine reports whether a Stripe-Signature header value carries,
// among its comma-separated parts, a t= within tolerance of now and a v1=
// that is the HMAC-SHA256 of "<t>.<body>" under one of secrets. It is the
// fuzzers' oracle: as lenient as a header can be, so a verifier that
// accepts what it refuses is accepting something unsigned.
func StripeGenuine(header string, body []byte, now time.Time, tolerance time.Duration, secrets ...string) bool {
	var stamps []string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			// Stripe signs "<unix seconds>.<body>"; "t=0042" names second 42.
			sec, err := strconv.ParseInt(v, 10, 64)
			at := time.Unix(sec, 0)
			if err == nil && !at.Before(now.Add(-tolerance)) && !at.After(now.Add(tolerance)) {
				stamps = append(stamps, strconv.FormatInt(sec, 10))
			}
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	for _, t := range stamps {
		for _, secret := range secrets {
			if macAmong([]byte(secret), t+".", body, sigs) {
				return true
			}
		}
	}
	return false
}

// macAmong reports whether the HMAC-SHA256 of prefix and body under key
// is one of sigs.
func macAmong(key []byte, prefix string, body []byte, sigs [][]byte) bool {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(prefix))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return true
		}
	}
	return false
}

// requestVerifier is a verifier of the receiver's shape (see
// provider.Verifier): it turns one webhook.Request into its events.
type requestVerifier func(ctx context.Context, r webhook.Request) ([]webhook.Event, error)

// FromRequestVerifier is the VerifierFuzz of a provider whose verifier
// takes a webhook.Request and whose deliveries carry one event each: v is
// called with the fuzzed headers and body as a POST, and must return one
// event when it accepts.
func FromRequestVerifier(provider string, v requestVerifier, sign func(body []byte) map[string]string, genuine func(headers map[string]string, body []byte) bool) VerifierFuzz {
	return VerifierFuzz{
		Provider: provider,
		Verify: func(headers map[string]string, body []byte) (webhook.Event, error) {
			evs, err := v(context.Background(), webhook.Request{Method: "POST", Header: headers, Body: body})
			if err != nil {
				return webhook.Event{}, err
			}
			if len(evs) != 1 {
				return webhook.Event{}, fmt.Errorf("%s: accepted with %d events, want 1", provider, len(evs))
			}
			return evs[0], nil
		},
		Sign:    sign,
		Genuine: genuine,
	}
}

// HMACGenuine reports whether the header value, after prefix ("sha256="
// for GitHub, "" for Shopify) and decoded by decode (hex or base64), is
// the HMAC-SHA256 of body under one of secrets, computed here without the
// verifier's code.
func HMACGenuine(value, prefix string, decode func(string) ([]byte, error), body []byte, secrets ...string) bool {
	rest, ok := strings.CutPrefix(strings.TrimSpace(value), prefix)
	if !ok {
		return false
	}
	sig, err := decode(rest)
	if err != nil {
		return false
	}
	for _, s := range secrets {
		if macAmong([]byte(s), "", body, [][]byte{sig}) {
			return true
		}
	}
	return false
}

// ShopifyGenuine reports whether X-Shopify-Hmac-Sha256 or its unprefixed
// spelling Shopify-Hmac-Sha256 is the base64 HMAC-SHA256 of body under one
// of secrets (see HMACGenuine): either one is enough, so the oracle is at
// least as lenient as a verifier may be.
func ShopifyGenuine(headers map[string]string, body []byte, secrets ...string) bool {
	return HMACGenuine(headers["x-shopify-hmac-sha256"], "", base64.StdEncoding.DecodeString, body, secrets...) ||
		HMACGenuine(headers["shopify-hmac-sha256"], "", base64.StdEncoding.DecodeString, body, secrets...)
}

// GitHubCarried is GitHub's VerifierFuzz.Carried: the body, or for a
// form-encoded delivery (Content-Type application/x-www-form-urlencoded,
// as mime.ParseMediaType reads it) the value of its payload field.
func GitHubCarried(headers map[string]string, body []byte) []byte {
	if mediaType, _, err := mime.ParseMediaType(headers["content-type"]); err != nil || mediaType != "application/x-www-form-urlencoded" {
		return body
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil
	}
	return []byte(form.Get("payload"))
}

// StandardGenuine reports whether headers carry a Standard Webhooks
// signature of body, computed here without the verifier's code: a
// webhook-id, a webhook-timestamp within tolerance of now, and among the
// space-separated parts of webhook-signature a "v1,<base64>" that is the
// HMAC-SHA256 of "<id>.<timestamp>.<body>" under one of secrets
// ("whsec_<base64 key>"), or a "v1a,<base64>" that is its ed25519
// signature under one of them ("whpk_<base64 public key>"). Each header
// may come as svix-<name> instead (as Svix sends them), and any mix of the
// two counts, so the oracle is at least as lenient as a verifier may be.
func StandardGenuine(headers map[string]string, body []byte, now time.Time, tolerance time.Duration, secrets ...string) bool {
	values := func(name string) []string {
		var vs []string
		for _, prefix := range []string{"webhook-", "svix-"} {
			if v := strings.TrimSpace(headers[prefix+name]); v != "" {
				vs = append(vs, v)
			}
		}
		return vs
	}
	var sigs, asigs [][]byte
	for _, header := range values("signature") {
		for part := range strings.FieldsSeq(header) {
			if value, ok := strings.CutPrefix(part, "v1,"); ok {
				if sig, err := base64.StdEncoding.DecodeString(value); err == nil {
					sigs = append(sigs, sig)
				}
			}
			if value, ok := strings.CutPrefix(part, "v1a,"); ok {
				if sig, err := base64.StdEncoding.DecodeString(value); err == nil {
					asigs = append(asigs, sig)
				}
			}
		}
	}
	for _, id := range values("id") {
		for _, ts := range values("timestamp") {
			sec, err := strconv.ParseInt(ts, 10, 64)
			at := time.Unix(sec, 0)
			if err != nil || at.Before(now.Add(-tolerance)) || at.After(now.Add(tolerance)) {
				continue
			}
			for _, secret := range secrets {
				if pub, ok := strings.CutPrefix(strings.TrimSpace(secret), "whpk_"); ok {
					key, err := base64.StdEncoding.DecodeString(pub)
					for _, sig := range asigs {
						if err == nil && len(key) == ed25519.PublicKeySize && ed25519.Verify(key, []byte(id+"."+ts+"."+string(body)), sig) {
							return true
						}
					}
					continue
				}
				key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(strings.TrimSpace(secret), "whsec_"))
				if err == nil && macAmong(key, id+"."+ts+".", body, sigs) {
					return true
				}
			}
		}
	}
	return false
}

// DeliveryID is the delivery id the fuzzers' genuine senders give a
// body: decided by the body, so the same body signs alike.
func DeliveryID(body []byte) string { return fmt.Sprintf("d-%x", sha256.Sum256(body))[:18] }

// StripeBodies returns the Stripe fuzzers' starting bodies: the real Stripe payloads
// in the repository's testdata/stripe (its variants and thin notifications) and the hostile shapes
// the unit tests name. Further regression inputs live in
// testdata/fuzz/<FuzzName>/, as go test reads them.
func StripeBodies(f *testing.F, now time.Time) [][]byte {
	f.Helper()
	_, bodies, err := verifytest.StripePayloads()
	if err != nil {
		f.Fatal(err)
	}
	_, thin, err := verifytest.StripeThinPayloads()
	if err != nil {
		f.Fatal(err)
	}
	bodies = append(bodies, thin...)
	return append(bodies,
		nil,
		[]byte("not json at all"),
		[]byte(`[1,2,3]`),
		[]byte(`{"object":"event","type":"checkout.session.completed","created":1}`),
		[]byte(`{"id":"../../etc/passwd","object":"event","type":"x"}`),
		[]byte(`{"id":"evt_1#evt_2","object":"event","type":"x"}`),
		[]byte(`{"id":"evt_`+strings.Repeat("a", 300)+`","object":"event","type":"x"}`),
		[]byte(`{"id":7,"object":"event","type":"x"}`),
		[]byte(`{"id":"evt_1","object":"charge","type":"x"}`),
		[]byte(`{"id":"evt_1","object":"event","type":""}`),
		verifytest.StripeEvent("charge.refunded", "evt_fuzz_refund", now, verifytest.WithSize(4096)),
	)
}
