package verify

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hookinbox/hookinbox/webhook"
)

// GitHubProvider is the Provider of every event GitHub.Verify returns.
const GitHubProvider = "github"

// GitHub verifies GitHub webhook deliveries: X-Hub-Signature-256 is
// "sha256=" and the hex HMAC-SHA256 of the raw body under the webhook's
// secret. The key is github#<X-GitHub-Delivery>, which a redelivery keeps;
// the type is X-GitHub-Event. The scheme has no timestamp, so a captured
// delivery verifies for ever; the inbox answers its replay as a duplicate.
//
// go-github's ValidatePayload does the same check, but it is not among the
// modules served here and would bring a large API client for twenty lines.
// Safe for concurrent use.
type GitHub struct {
	Secrets []string // accepted secrets; several while rotating
}

// Verify implements the receiver's verifier: 401 (ErrNoSignature,
// ErrBadSignature) before anything is parsed, then 400 for a missing or
// implausible delivery id (ErrNoEventID, ErrBadEventID), no event name or
// a body that is not a JSON object.
func (g *GitHub) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	if err := checkSecrets(GitHubProvider, g.Secrets); err != nil {
		return nil, err
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(r.Header["x-hub-signature-256"]), "sha256=")
	if !ok {
		return nil, fmt.Errorf("github: no X-Hub-Signature-256 sha256= header: %w", ErrNoSignature)
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil {
		return nil, fmt.Errorf("github: X-Hub-Signature-256 is not hex: %w", ErrBadSignature)
	}
	var want [][]byte
	for _, s := range g.Secrets {
		want = append(want, hmacSHA256([]byte(s), r.Body))
	}
	if !anyEqual([][]byte{sig}, want) {
		return nil, fmt.Errorf("github: signature matches none of %d secrets: %w", len(g.Secrets), ErrBadSignature)
	}
	id := strings.TrimSpace(r.Header["x-github-delivery"])
	if err := eventID(GitHubProvider, "X-GitHub-Delivery", id); err != nil {
		return nil, err
	}
	typ := strings.TrimSpace(r.Header["x-github-event"])
	if typ == "" {
		return nil, fmt.Errorf("github: no X-GitHub-Event: %w", ErrNotEvent)
	}
	if err := jsonObject(GitHubProvider, r.Body); err != nil {
		return nil, err
	}
	if !json.Valid(r.Body) {
		return nil, fmt.Errorf("github: body is not valid JSON: %w", ErrNotJSON)
	}
	return []webhook.Event{{Provider: GitHubProvider, ID: id, Type: typ, Raw: r.Body}}, nil
}
