package github

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Name is the Provider of every event Verifier.Verify returns.
const Name = "github"

// verifier verifies GitHub webhook deliveries: X-Hub-Signature-256 is
// "sha256=" and the hex HMAC-SHA256 of the raw body under the webhook's
// secret. The key is github#<X-GitHub-Delivery>, which a redelivery keeps;
// the type is X-GitHub-Event. The scheme has no timestamp, so a captured
// delivery verifies for ever; the inbox answers its replay as a duplicate.
//
// A hook has one of two content types. application/json sends the event
// as the body. application/x-www-form-urlencoded (the default of a hook
// created through GitHub's API) sends "payload=" and the URL-encoded JSON:
// the signature still covers the body as sent, and the event returned
// carries the JSON of the payload field, so what is stored and processed
// (and reprocessed after a replay) is the same JSON either way.
//
// go-github's ValidatePayload does the same check, but it is not among the
// modules served here and would bring a large API client for twenty lines.
// Safe for concurrent use.
type verifier struct {
	Secrets []string // accepted secrets; several while rotating
}

// Verify implements the receiver's verifier: 401 (ErrNoSignature,
// ErrBadSignature) before anything is parsed, then 400 for a missing or
// implausible delivery id (ErrNoEventID, ErrBadEventID), no event name, a
// body that is not a JSON object, or a form body without exactly one
// payload field holding one (ErrNotJSON).
func (g *verifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	if err := provider.CheckSecrets(Name, g.Secrets); err != nil {
		return nil, err
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(r.Header["x-hub-signature-256"]), "sha256=")
	if !ok {
		return nil, fmt.Errorf("github: no X-Hub-Signature-256 sha256= header: %w", provider.ErrNoSignature)
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil {
		return nil, fmt.Errorf("github: X-Hub-Signature-256 is not hex: %w", provider.ErrBadSignature)
	}
	if !provider.BodySignedBy(sig, r.Body, g.Secrets) {
		return nil, fmt.Errorf("github: signature matches none of %d secrets: %w", len(g.Secrets), provider.ErrBadSignature)
	}
	id := strings.TrimSpace(r.Header["x-github-delivery"])
	if err := provider.CheckEventID(Name, "X-GitHub-Delivery", id); err != nil {
		return nil, err
	}
	typ := strings.TrimSpace(r.Header["x-github-event"])
	if typ == "" {
		return nil, fmt.Errorf("github: no X-GitHub-Event: %w", provider.ErrNotEvent)
	}
	event := r.Body
	if githubForm(r.Header["content-type"]) {
		if event, err = githubFormPayload(r.Body); err != nil {
			return nil, err
		}
	}
	if err := provider.CheckJSONObject(Name, event); err != nil {
		return nil, err
	}
	if !json.Valid(event) {
		return nil, fmt.Errorf("github: body is not valid JSON: %w", provider.ErrNotJSON)
	}
	return []webhook.Event{{Provider: Name, ID: id, Type: typ, Raw: event}}, nil
}

// githubForm reports whether the content type is the form encoding; any
// other (application/json, or none) means the body is the event.
func githubForm(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/x-www-form-urlencoded"
}

// githubFormPayload returns the event a signed form body carries in its
// one payload field.
func githubFormPayload(body []byte) ([]byte, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("github: %d-byte form body is not URL-encoded: %w", len(body), provider.ErrNotJSON)
	}
	if len(form["payload"]) != 1 {
		return nil, fmt.Errorf("github: form body has %d payload fields, want 1: %w", len(form["payload"]), provider.ErrNotJSON)
	}
	return []byte(form["payload"][0]), nil
}
