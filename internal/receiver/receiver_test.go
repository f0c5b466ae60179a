package receiver_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// newHandler returns a handler on the memory store and a fake queue.
func newHandler(t *testing.T, clock func() time.Time) (*receiver.Handler, *inboxtest.Memory, *fakeQueue) {
	t.Helper()
	store, q := inboxtest.NewMemory(), &fakeQueue{}
	h := handlerOn(clock, store, q)
	return h, store, q
}

func fixed() time.Time { return now }

func TestNewEventIsClaimedAndEnqueuedOnce(t *testing.T) {
	h, store, q := newHandler(t, fixed)
	ctx := context.Background()
	req := signed("checkout.session.completed", "evt_new")
	for i, want := range []string{"accepted", "duplicate", "duplicate"} {
		resp, err := h.Handle(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || answer(t, resp) != want {
			t.Errorf("delivery %d: %d %s, want 200 %s", i+1, resp.StatusCode, resp.Body, want)
		}
	}
	want := []queue.Envelope{{Key: "stripe#evt_new", Type: "checkout.session.completed"}}
	if diff := cmp.Diff(want, q.Sent()); diff != "" {
		t.Errorf("messages sent (-want +got):\n%s", diff)
	}
	it, err := store.Get(ctx, "stripe#evt_new")
	if err != nil {
		t.Fatal(err)
	}
	if it.Status != inbox.Received || it.EventType != "checkout.session.completed" || it.PayloadSHA256 != inbox.PayloadSHA256([]byte(req.Body)) {
		t.Errorf("claim = %+v", it)
	}
	payload, err := store.Payload(ctx, "stripe#evt_new")
	if err != nil || string(payload) != req.Body {
		t.Errorf("stored payload = %q, %v; want the raw body", payload, err)
	}
}

// TestHeaderNamesAreMatchedInAnyCase: a caller that does not lower-case
// header names as API Gateway does (Stripe-Signature) is verified alike,
// and the request it passed is left as it was.
func TestHeaderNamesAreMatchedInAnyCase(t *testing.T) {
	h, _, q := newHandler(t, fixed)
	req := signed("checkout.session.completed", "evt_case")
	sig := req.Headers["stripe-signature"]
	delete(req.Headers, "stripe-signature")
	req.Headers["Stripe-Signature"] = sig
	resp, _ := h.Handle(context.Background(), req)
	if resp.StatusCode != http.StatusOK || answer(t, resp) != "accepted" {
		t.Fatalf("delivery with Stripe-Signature: %d %s, want 200 accepted", resp.StatusCode, resp.Body)
	}
	if len(q.Sent()) != 1 {
		t.Errorf("sent %d messages, want 1", len(q.Sent()))
	}
	if _, ok := req.Headers["stripe-signature"]; ok || req.Headers["Stripe-Signature"] != sig {
		t.Errorf("the caller's headers were changed: %v", req.Headers)
	}
}

func TestBase64BodyIsVerifiedOverDecodedBytes(t *testing.T) {
	h, _, q := newHandler(t, fixed)
	resp, _ := h.Handle(context.Background(), base64Request(signed("checkout.session.completed", "evt_b64")))
	if resp.StatusCode != http.StatusOK || answer(t, resp) != "accepted" {
		t.Fatalf("base64 delivery: %d %s", resp.StatusCode, resp.Body)
	}
	if len(q.Sent()) != 1 {
		t.Errorf("sent %d messages, want 1", len(q.Sent()))
	}
}

func TestSendFailureKeepsTheClaimAndAnswers500(t *testing.T) {
	h, store, q := newHandler(t, fixed)
	ctx := context.Background()
	q.fail = true
	req := signed("checkout.session.completed", "evt_sqsdown")
	resp, _ := h.Handle(ctx, req)
	if resp.StatusCode != http.StatusInternalServerError || answer(t, resp) != "internal error" {
		t.Fatalf("SQS down: %d %s, want 500 internal error", resp.StatusCode, resp.Body)
	}
	if it, err := store.Get(ctx, "stripe#evt_sqsdown"); err != nil || it.Status != inbox.Received {
		t.Errorf("claim after failed send: %v, %v; want it kept in RECEIVED", it.Status, err)
	}
	// The provider retries once SQS is back: a duplicate, which sends the
	// unsent claim on, one message.
	q.fail = false
	resp, _ = h.Handle(ctx, req)
	if answer(t, resp) != "duplicate" || len(q.Sent()) != 1 {
		t.Errorf("retry: %s, %d messages; want duplicate and 1", resp.Body, len(q.Sent()))
	}
}

func TestStuckClaimIsReenqueuedOncePerGrace(t *testing.T) {
	clock := now
	h, store, q := newHandler(t, func() time.Time { return clock })
	ctx := context.Background()
	// A crash between claim and send: the claim exists, no message does.
	ev := webhook.Event{Provider: "stripe", ID: "evt_stuck", Type: "checkout.session.completed", Raw: []byte("{}")}
	if _, err := store.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		after    time.Duration
		wantSent int
	}{
		{time.Minute, 0},                 // within grace: a plain duplicate
		{2*time.Minute + time.Second, 1}, // past grace: re-enqueued
		{3 * time.Minute, 1},             // within the next grace period: not again
		{5 * time.Minute, 2},             // past it: once more
	}
	for _, s := range steps {
		clock = now.Add(s.after)
		req := signed("checkout.session.completed", "evt_stuck")
		req.Headers["stripe-signature"] = signHeaderAt(req.Body, clock)
		resp, _ := h.Handle(ctx, req)
		if answer(t, resp) != "duplicate" {
			t.Errorf("after %v: %s, want duplicate", s.after, resp.Body)
		}
		if got := len(q.Sent()); got != s.wantSent {
			t.Errorf("after %v: %d messages sent, want %d", s.after, got, s.wantSent)
		}
	}
	if p, err := store.Payload(ctx, "stripe#evt_stuck"); err != nil || len(p) == 0 {
		t.Errorf("re-enqueue did not store the payload: %v", err)
	}
}

func TestConcurrentDeliveriesClaimOnce(t *testing.T) {
	h, _, q := newHandler(t, fixed)
	req := signed("checkout.session.completed", "evt_concurrent")
	const n = 50
	var wg sync.WaitGroup
	answers := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := h.Handle(context.Background(), req)
			answers <- answer(t, resp)
		}()
	}
	wg.Wait()
	close(answers)
	counts := map[string]int{}
	for a := range answers {
		counts[a]++
	}
	if diff := cmp.Diff(map[string]int{"accepted": 1, "duplicate": n - 1}, counts); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if len(q.Sent()) != 1 {
		t.Errorf("sent %d messages, want 1", len(q.Sent()))
	}
}

func TestHostileRequestsChangeNothing(t *testing.T) {
	for _, tc := range hostileRequests(receiver.DefaultMaxBodyBytes) {
		t.Run(tc.name, func(t *testing.T) {
			h, store, q := newHandler(t, fixed)
			resp, err := h.Handle(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Errorf("status = %d (%s), want %d", resp.StatusCode, resp.Body, tc.status)
			}
			if n := len(q.Sent()); n != 0 {
				t.Errorf("sent %d messages, want none", n)
			}
			if items, _ := store.Pending(context.Background(), now.Add(time.Hour), 0); len(items) != 0 {
				t.Errorf("wrote %d inbox items, want none", len(items))
			}
		})
	}
}

func TestInternalErrorTextNeverReachesCaller(t *testing.T) {
	h, _, q := newHandler(t, fixed)
	q.fail = true
	resp, _ := h.Handle(context.Background(), signed("checkout.session.completed", "evt_leak"))
	if resp.Body != `{"error":"internal error"}` {
		t.Errorf("body = %s, want only the public message", resp.Body)
	}
}

// TestBodyLimitIsWhatLambdaReceives: by default a body of exactly
// DefaultMaxBodyBytes (6 MB of invocation less the event's envelope) is
// accepted and stored whole, and one byte more is answered 413 with the
// reason, as a text body or base64-encoded.
func TestBodyLimitIsWhatLambdaReceives(t *testing.T) {
	if receiver.DefaultMaxBodyBytes != 6_291_456-32_768 {
		t.Fatalf("DefaultMaxBodyBytes = %d, want 6 MiB less 32 KiB of envelope", receiver.DefaultMaxBodyBytes)
	}
	body := padded(verifytest.StripeEvent("checkout.session.completed", "evt_limit", now.Add(-time.Second)), receiver.DefaultMaxBodyBytes)
	atLimit := request(body, stripe.SignatureHeader(body, now, secret))
	if len(atLimit.Body) != receiver.DefaultMaxBodyBytes {
		t.Fatalf("body of %d bytes, want %d", len(atLimit.Body), receiver.DefaultMaxBodyBytes)
	}
	over := atLimit
	over.Body += " " // the size is checked before the signature
	for _, tc := range []struct {
		name string
		req  events.APIGatewayV2HTTPRequest
		want int
	}{
		{"at the limit", atLimit, http.StatusOK},
		{"one byte over", over, http.StatusRequestEntityTooLarge},
		{"one byte over, base64", base64Request(over), http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, store, _ := newHandler(t, fixed)
			resp, err := h.Handle(context.Background(), tc.req)
			if err != nil || resp.StatusCode != tc.want {
				t.Fatalf("answer %d %s, %v; want %d", resp.StatusCode, resp.Body, err, tc.want)
			}
			if tc.want != http.StatusOK {
				if got := answer(t, resp); !strings.Contains(got, "too large") {
					t.Errorf("413 says %q; want the reason", got)
				}
				return
			}
			if raw, err := store.Payload(context.Background(), "stripe#evt_limit"); err != nil || string(raw) != atLimit.Body {
				t.Errorf("stored %d bytes, %v; want the whole %d", len(raw), err, len(atLimit.Body))
			}
		})
	}
}

// TestZeroWebhookIsPostAndJSON: a provider whose provider.Webhook leaves
// Method and Accepted zero (the Stripe verifier here) takes POST, answers
// any other method 405 with Allow: POST, and an accepted delivery with
// JSON.
func TestZeroWebhookIsPostAndJSON(t *testing.T) {
	h, _, _ := newHandler(t, fixed)
	for method, want := range map[string]int{"GET": 405, "PUT": 405, "POST": 200, "": 200} {
		req := signed("checkout.session.completed", "evt_zero_"+method)
		req.RequestContext.HTTP.Method = method
		resp, err := h.Handle(context.Background(), req)
		switch {
		case err != nil || resp.StatusCode != want:
			t.Errorf("%q: %d %s, %v; want %d", method, resp.StatusCode, resp.Body, err, want)
		case want == 405 && resp.Headers["allow"] != "POST":
			t.Errorf("%q: Allow %q; want POST", method, resp.Headers["allow"])
		case want == 200 && resp.Body != `{"status":"accepted"}`:
			t.Errorf("%q: %s; want JSON accepted", method, resp.Body)
		}
	}
}
