package github_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/providers/github"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/hookinbox/hookinbox/internal/verify/verifyfuzz"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestGitHubDocumentedExample is GitHub's own example from "Validating
// webhook deliveries": secret "It's a Secret to Everybody", payload
// "Hello, World!".
func TestGitHubDocumentedExample(t *testing.T) {
	const sig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	g := &github.Verifier{Secrets: []string{"It's a Secret to Everybody"}}
	req := webhook.Request{Method: "POST", Header: map[string]string{
		"x-hub-signature-256": sig,
		"x-github-delivery":   "72d3162e-cc78-11e3-81ab-4c9367dc0958",
		"x-github-event":      "ping",
	}, Body: []byte("Hello, World!")}
	// The documented payload is not JSON: it authenticates (no 401) and
	// is then refused as malformed (400).
	_, err := g.Verify(context.Background(), req)
	if !errors.Is(err, provider.ErrNotJSON) {
		t.Fatalf("documented example: err = %v, want ErrNotJSON after a matching signature", err)
	}
	req.Header["x-hub-signature-256"] = "sha256=" + strings.Repeat("0", 64)
	if _, err := g.Verify(context.Background(), req); !errors.Is(err, provider.ErrBadSignature) {
		t.Fatalf("wrong signature: err = %v, want ErrBadSignature", err)
	}
}

func TestGitHubVerify(t *testing.T) {
	const delivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	body := []byte(`{"zen":"Keep it logically awesome.","hook_id":123}`)
	g := &github.Verifier{Secrets: []string{"old", "current"}}
	ctx := context.Background()
	got, err := g.Verify(ctx, webhook.Request{Header: github.Headers(body, "current", delivery, "ping"), Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Key() != "github#"+delivery || got[0].Type != "ping" || string(got[0].Raw) != string(body) {
		t.Fatalf("Verify = %+v", got)
	}
	h := func(mut func(map[string]string)) webhook.Request {
		hd := github.Headers(body, "current", delivery, "ping")
		mut(hd)
		return webhook.Request{Header: hd, Body: body}
	}
	tests := []struct {
		name string
		req  webhook.Request
		want error
	}{
		{"forged", webhook.Request{Header: github.Headers(body, "attacker", delivery, "ping"), Body: body}, provider.ErrBadSignature},
		{"no signature", h(func(m map[string]string) { delete(m, "x-hub-signature-256") }), provider.ErrNoSignature},
		{"sha1 only", h(func(m map[string]string) { m["x-hub-signature-256"] = "sha1=abc" }), provider.ErrNoSignature},
		{"not hex", h(func(m map[string]string) { m["x-hub-signature-256"] = "sha256=zz" }), provider.ErrBadSignature},
		{"missing delivery id", h(func(m map[string]string) { delete(m, "x-github-delivery") }), provider.ErrNoEventID},
		{"bad delivery id", h(func(m map[string]string) { m["x-github-delivery"] = "a#b" }), provider.ErrBadEventID},
		{"no event name", h(func(m map[string]string) { delete(m, "x-github-event") }), provider.ErrNotEvent},
		{"malformed body", webhook.Request{Header: github.Headers([]byte("{not json"), "current", delivery, "ping"), Body: []byte("{not json")}, provider.ErrNotJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := g.Verify(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestGitHubFormEncoded: a hook whose content type is
// application/x-www-form-urlencoded sends payload=<URL-encoded JSON>,
// signed over the form bytes as sent; the event is the JSON of the payload
// field. The signature was computed outside Go:
//
//	printf '%s' 'payload=%7B%22zen%22%3A%22Design+for+failure.%22%2C%22hook_id%22%3A123%7D' |
//	  openssl dgst -sha256 -hmac "It's a Secret to Everybody"
func TestGitHubFormEncoded(t *testing.T) {
	const delivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	event := []byte(`{"zen":"Design for failure.","hook_id":123}`)
	form := []byte("payload=%7B%22zen%22%3A%22Design+for+failure.%22%2C%22hook_id%22%3A123%7D")
	g := &github.Verifier{Secrets: []string{"It's a Secret to Everybody"}}
	ctx := context.Background()
	headers := map[string]string{
		"content-type":        "application/x-www-form-urlencoded",
		"x-hub-signature-256": "sha256=6aa05071e5f6f3ca4f5e19131d582ca7d89f1247c9aa0710fdd3cc976973df1d",
		"x-github-delivery":   delivery,
		"x-github-event":      "ping",
	}
	evs, err := g.Verify(ctx, webhook.Request{Header: headers, Body: form})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Key() != "github#"+delivery || evs[0].Type != "ping" || string(evs[0].Raw) != string(event) {
		t.Fatalf("Verify = %+v, want the ping carrying %s", evs, event)
	}
	// Our builder sends the same bytes with the same signature.
	body, built := github.Form(event, "It's a Secret to Everybody", delivery, "ping")
	if string(body) != string(form) || built["x-hub-signature-256"] != headers["x-hub-signature-256"] || built["content-type"] != headers["content-type"] {
		t.Errorf("GitHubForm = %s %v, want %s %v", body, built, form, headers)
	}

	signed := func(body string, contentType string) webhook.Request {
		h := github.Headers([]byte(body), "It's a Secret to Everybody", delivery, "ping")
		h["content-type"] = contentType
		return webhook.Request{Header: h, Body: []byte(body)}
	}
	const formType = "application/x-www-form-urlencoded"
	// A charset parameter and any case of the media type are the same type.
	if _, err := g.Verify(ctx, signed(string(form), "Application/X-WWW-Form-Urlencoded; charset=utf-8")); err != nil {
		t.Errorf("form with a charset: %v", err)
	}
	tests := []struct {
		name string
		req  webhook.Request
		want error
	}{
		{"the form body's JSON, re-signed by no one", webhook.Request{Header: headers, Body: event}, provider.ErrBadSignature},
		{"decoded JSON signed, sent as a form", signed(string(event), formType), provider.ErrNotJSON},
		{"no payload field", signed("zen=1", formType), provider.ErrNotJSON},
		{"two payload fields", signed(string(form)+"&"+string(form), formType), provider.ErrNotJSON},
		{"bad escape", signed("payload=%7", formType), provider.ErrNotJSON},
		{"payload not an object", signed("payload=%5B1%5D", formType), provider.ErrNotJSON},
		{"payload not JSON", signed("payload=%7Bnope", formType), provider.ErrNotJSON},
		{"a form sent as JSON", signed(string(form), "application/json"), provider.ErrNotJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := g.Verify(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzGitHubVerify holds github.Verifier to verifyfuzz.VerifierFuzz's
// property: no panic, nothing accepted unless an independent HMAC of the
// exact body matches, every refusal a 4xx kind, a genuine delivery never
// refused as unauthenticated and a tampered one always refused.
func FuzzGitHubVerify(f *testing.F) {
	const secret = "s3cret"
	g := &github.Verifier{Secrets: []string{secret}}
	fz := verifyfuzz.FromRequestVerifier("github", g.Verify,
		func(b []byte) map[string]string {
			return github.Headers(b, secret, verifyfuzz.DeliveryID(b), "issues")
		},
		func(h map[string]string, b []byte) bool {
			return verifyfuzz.HMACGenuine(h["x-hub-signature-256"], "sha256=", hex.DecodeString, b, secret)
		})
	fz.Carried = verifyfuzz.GitHubCarried
	fz.Seed(f, []byte(`{"action":"opened","number":1}`), []byte("Hello, World!"), nil)
	// Form-encoded deliveries, genuine and with the fuzzer's headers.
	form, _ := github.Form([]byte(`{"action":"opened","number":1}`), secret, "d-1", "issues")
	f.Add("content-type: application/x-www-form-urlencoded", form, verifyfuzz.Signed, uint16(0))
	f.Add("content-type: application/x-www-form-urlencoded", form, verifyfuzz.Tampered, uint16(9))
	f.Add("content-type: application/x-www-form-urlencoded; charset=utf-8", []byte("payload=%7B%7D&payload=%7B%7D"), verifyfuzz.Signed, uint16(0))
	// GitHub's documented example, under its own secret: forged here.
	f.Add("x-hub-signature-256: sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17\nx-github-delivery: d-1\nx-github-event: ping",
		[]byte("Hello, World!"), verifyfuzz.AsGiven, uint16(0))
	f.Fuzz(fz.Check)
}
