package receiver_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/github"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/verify/verifyfuzz"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// fuzzMaxBody is the body limit of the fuzzed handler: small, so the
// fuzzer reaches the 413 path.
const fuzzMaxBody = 8 << 10

// fuzzProviders are the providers the fuzzed handler serves, each with
// its verifier's fuzz description (verifyfuzz.VerifierFuzz). A provider
// added to the receiver gets its entry here too.
func fuzzProviders() map[string]verifyfuzz.VerifierFuzz {
	s := verifytest.StripeVerify(fixed, secret, oldSecret)
	const ghSecret, shopSecret = "gh_fuzz_secret_0123", "shpss_fuzz_secret_0123456789abcdef"
	gh, shop := verifytest.Verifier(github.Provider{}, nil, ghSecret), verifytest.Verifier(shopify.Provider{}, nil, shopSecret)
	// A delivery id the body decides, so the same body signs alike.
	id := func(body []byte) string { return fmt.Sprintf("d-%x", sha256.Sum256(body))[:18] }
	github := verifyfuzz.FromRequestVerifier("github", gh.Verify,
		func(b []byte) map[string]string { return github.Headers(b, ghSecret, id(b), "issues") },
		func(h map[string]string, b []byte) bool {
			return verifyfuzz.HMACGenuine(h["x-hub-signature-256"], "sha256=", hex.DecodeString, b, ghSecret)
		})
	github.Carried = verifyfuzz.GitHubCarried
	return map[string]verifyfuzz.VerifierFuzz{
		"stripe": verifyfuzz.StripeFuzz(s, now, secret, oldSecret),
		"github": github,
		"shopify": verifyfuzz.FromRequestVerifier("shopify", shop.Verify,
			func(b []byte) map[string]string {
				return shopify.Headers(b, shopSecret, id(b), "orders/paid", now)
			},
			func(h map[string]string, b []byte) bool { return verifyfuzz.ShopifyGenuine(h, b, shopSecret) }),
	}
}

// countingStore is the memory inbox, counting every write the receiver
// makes (all four of its calls write).
type countingStore struct {
	*inboxtest.Memory
	writes atomic.Int32
}

func (s *countingStore) Claim(ctx context.Context, c inbox.Claim) (inbox.Item, error) {
	s.writes.Add(1)
	return s.Memory.Claim(ctx, c)
}

func (s *countingStore) PutPayload(ctx context.Context, it inbox.Item, raw []byte) error {
	s.writes.Add(1)
	return s.Memory.PutPayload(ctx, it, raw)
}

func (s *countingStore) MarkEnqueued(ctx context.Context, key webhook.Key, cutoff, at time.Time, statuses ...inbox.Status) (inbox.Item, error) {
	s.writes.Add(1)
	return s.Memory.MarkEnqueued(ctx, key, cutoff, at, statuses...)
}

// FuzzReceiverHandle fuzzes the receiver's entry point, Handle, on the
// memory inbox and a fake queue: a fresh handler per input, so every
// answer is a first delivery's. The property:
//
//   - no panic, no error from Handle, a JSON answer with a content type;
//   - a 2xx only for a POST to a known provider whose headers carry a
//     genuine signature of the exact (decoded) body, and then exactly one
//     claim in RECEIVED holding that body and exactly one message for it;
//   - anything else is a 4xx (never a 500: the fakes do not fail) with
//     nothing written to the inbox and nothing sent.
//
// The input is the path's provider, the method, header lines ("name:
// value"), the body, a verifytest mode (as given, signed, signed then
// tampered), the byte a tamper changes, and whether API Gateway passes the
// body base64-encoded.
func FuzzReceiverHandle(f *testing.F) {
	paths, err := filepath.Glob("../../testdata/stripe/*.json")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no Stripe payloads in testdata: %v", err)
	}
	bodies := [][]byte{
		nil,
		[]byte("not json"),
		[]byte(`{"id":"evt_1#evt_2","object":"event","type":"x"}`),
		[]byte(`{"id":"evt_ok","object":"event","type":"x"}`),
		verifytest.StripeEvent("charge.refunded", "evt_big", now, verifytest.WithSize(fuzzMaxBody+10)),
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	stripe := fuzzProviders()["stripe"]
	for i, body := range bodies {
		pos := uint16(i * 131)
		f.Add("stripe", "POST", "", body, verifyfuzz.Signed, pos, false)
		f.Add("stripe", "POST", "", body, verifyfuzz.Signed, pos, true)
		f.Add("stripe", "", "", body, verifyfuzz.Tampered, pos, false)
		f.Add("stripe", "POST", verifyfuzz.HeaderLines(stripe.Sign(body)), body, verifyfuzz.AsGiven, pos, false)
		f.Add("stripe", "GET", "", body, verifyfuzz.Signed, pos, false)
		f.Add("paypal", "POST", "", body, verifyfuzz.Signed, pos, false)
		f.Add("github", "POST", "", body, verifyfuzz.Signed, pos, false)
		f.Add("github", "POST", "", body, verifyfuzz.Tampered, pos, false)
		f.Add("github", "POST", "content-type: application/x-www-form-urlencoded", []byte(url.Values{"payload": {string(body)}}.Encode()), verifyfuzz.Signed, pos, false)
		f.Add("shopify", "POST", "", body, verifyfuzz.Signed, pos, false)
		f.Add("shopify", "POST", "", body, verifyfuzz.Tampered, pos, true)
	}

	providers := fuzzProviders()
	verifiers := map[string]receiver.Provider{}
	for name, fz := range providers {
		verifiers[name] = receiver.Provider{Verifier: fuzzVerifier(func(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
			ev, err := fz.Verify(r.Header, r.Body)
			if err != nil {
				return nil, err
			}
			return []webhook.Event{ev}, nil
		})}
	}
	f.Fuzz(func(t *testing.T, provider, method, lines string, body []byte, mode uint8, pos uint16, b64 bool) {
		fz, known := providers[provider]
		if !known {
			fz = stripe // sign as Stripe would: the path, not the signature, is wrong
		}
		headers, sent := fz.Request(lines, body, mode, pos)
		req := lambdalocal.WebhookEvent(provider, method, headers, sent)
		req.RouteKey = "POST /webhooks/{provider}" // the route matched; method may be any
		if b64 {
			req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(sent), true
		}
		store, q := &countingStore{Memory: inboxtest.NewMemory()}, &fakeQueue{}
		in := intake.New(intake.Config{Now: fixed}, store, q, nil)
		h := receiver.New(receiver.Config{MaxBodyBytes: fuzzMaxBody}, verifiers, in, nil)

		resp, err := h.Handle(context.Background(), req)
		if err != nil {
			t.Fatalf("Handle error: %v", err)
		}
		var answer struct{ Status, Error string }
		if err := json.Unmarshal([]byte(resp.Body), &answer); err != nil || resp.Headers["content-type"] != "application/json" {
			t.Fatalf("answer %d %q is not a JSON answer (%v)", resp.StatusCode, resp.Body, err)
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			switch resp.StatusCode {
			case http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge:
			default:
				t.Fatalf("refusal status %d (%s), want a documented 4xx", resp.StatusCode, resp.Body)
			}
			if n := store.writes.Load(); n != 0 {
				t.Fatalf("answered %d but made %d inbox writes", resp.StatusCode, n)
			}
			if sent := q.Sent(); len(sent) != 0 {
				t.Fatalf("answered %d but sent %v", resp.StatusCode, sent)
			}
			return
		}

		if !known || (method != "" && method != http.MethodPost) {
			t.Fatalf("answered %d to %s /webhooks/%s", resp.StatusCode, method, provider)
		}
		fz.CheckAccepted(t, headers, sent)
		if resp.StatusCode != http.StatusOK || answer.Status != intake.Accepted.String() {
			t.Fatalf("first delivery answered %d %q, want 200 accepted", resp.StatusCode, resp.Body)
		}
		msgs := q.Sent()
		if len(msgs) != 1 {
			t.Fatalf("accepted with %d messages sent, want 1", len(msgs))
		}
		ctx := context.Background()
		it, err := store.Get(ctx, msgs[0].Key)
		if err != nil || it.Status != inbox.Received {
			t.Fatalf("claim of %s = %+v, %v; want RECEIVED", msgs[0].Key, it, err)
		}
		want := sent
		if fz.Carried != nil {
			want = fz.Carried(headers, sent)
		}
		if raw, err := store.Payload(ctx, msgs[0].Key); err != nil || string(raw) != string(want) {
			t.Fatalf("stored payload of %s is not the event the signed body carries (%v)", msgs[0].Key, err)
		}
		if msgs[0].Key.Provider() != provider {
			t.Fatalf("message key %s is not under provider %q", msgs[0].Key, provider)
		}
	})
}

// fuzzVerifier adapts a function to a receiver.Provider's Verifier.
type fuzzVerifier func(ctx context.Context, r webhook.Request) ([]webhook.Event, error)

func (f fuzzVerifier) Verify(ctx context.Context, r webhook.Request) ([]webhook.Event, error) {
	return f(ctx, r)
}
