// Package warehouse is this module's own webhook provider, added beside
// hookinbox's the way a team adds one: the company's warehouse system
// POSTs one JSON event a delivery,
//
//	{"id":"wh_evt_1","type":"shipment.dispatched","created":"2026-12-01T10:00:00Z","order":"1001"}
//
// and signs it in X-Warehouse-Signature: the hex HMAC-SHA256 of the body
// under the secret both sides hold. The key is warehouse#<id>, the type
// the body's "type" (signed, so a metric dimension as it is). The
// functions' mains hand Provider to processorfn.Run, receiverfn.Run and
// reconcilerfn.Run, and the CLI's main and the tests hand Sender (its
// test deliveries, sample.go) to cli.Main and hookinboxtest; the
// template's WAREHOUSE_WEBHOOK_SECRET (business.yaml) enables it.
package warehouse

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Name is the provider's {provider} path segment and key prefix.
const Name = "warehouse"

// Header carries the signature.
const Header = "x-warehouse-signature"

// Provider is the warehouse system. It fetches nothing and has no
// reconcile source.
type Provider struct {
	provider.NoFetch
	provider.NoSource
}

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "WAREHOUSE_WEBHOOK_SECRET"}
}

// Verifier implements provider.Provider.
func (Provider) Verifier(secrets []string, _ *provider.Env) (provider.Verifier, error) {
	return verifier{secrets}, provider.CheckSecrets(Name, secrets)
}

type verifier struct{ secrets []string }

// Verify checks the signature over the raw body before reading it: 401
// for a missing or wrong one, then 400 for a body that is not an event.
func (v verifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	header := strings.TrimSpace(r.Header[Header])
	if header == "" {
		return nil, fmt.Errorf("warehouse: no X-Warehouse-Signature: %w", provider.ErrNoSignature)
	}
	sig, err := hex.DecodeString(header)
	if err != nil {
		return nil, fmt.Errorf("warehouse: X-Warehouse-Signature is not hex: %w", provider.ErrBadSignature)
	}
	if !provider.BodySignedBy(sig, r.Body, v.secrets) {
		return nil, fmt.Errorf("warehouse: signature matches none of %d secrets: %w", len(v.secrets), provider.ErrBadSignature)
	}
	if err := provider.CheckJSONObject(Name, r.Body); err != nil {
		return nil, err
	}
	var ev struct {
		ID      string    `json:"id"`
		Type    string    `json:"type"`
		Created time.Time `json:"created"`
	}
	if err := json.Unmarshal(r.Body, &ev); err != nil {
		return nil, fmt.Errorf("warehouse: %w", provider.ErrNotEvent)
	}
	if err := provider.CheckEventID(Name, "id", ev.ID); err != nil {
		return nil, err
	}
	if ev.Type == "" {
		return nil, fmt.Errorf("warehouse: no type: %w", provider.ErrNotEvent)
	}
	return []webhook.Event{{Provider: Name, ID: ev.ID, Type: ev.Type, Created: ev.Created.UTC(), Raw: r.Body}}, nil
}
