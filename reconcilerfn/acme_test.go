package reconcilerfn_test

// acme is a team's own provider, written as it would be in the team's own
// module: on hookinbox's public packages alone (TestTeamProviderImports
// holds that). The acme system signs each delivery in X-Acme-Signature
// (hex HMAC-SHA256 of the body) and sends a thin notification,
//
//	{"id":"ev_1","type":"order.paid","created":"2026-12-01T10:00:00Z"}
//
// whose event, with its "data", its API serves at GET /v1/events/{id};
// GET /v1/events?from=&to= lists the events created in [from, to),
// oldest first. The processor fetches a notification's event (Fetch);
// the reconciler lists what never arrived (a Lister that asks the inbox,
// Env.Inbox, before it fetches an event).

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

const (
	acmeName   = "acme"
	acmeHeader = "x-acme-signature"
)

// acmeProvider is the acme system: verifier, fetch and reconcile source.
type acmeProvider struct{}

func (acmeProvider) Name() string { return acmeName }

func (acmeProvider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "ACME_WEBHOOK_SECRET"}
}

func (acmeProvider) Verifier(secrets []string, _ *provider.Env) (provider.Verifier, error) {
	return acmeVerifier{secrets}, provider.CheckSecrets(acmeName, secrets)
}

// Processor fetches each notification's event from ACME_API_URL with
// ACME_API_KEY (or its _ARN); neither set: nothing is fetched.
func (acmeProvider) Processor(ctx context.Context, env *provider.Env) (provider.Fetch, error) {
	api, err := newAcmeAPI(ctx, env)
	if err != nil || api == nil {
		return provider.Fetch{}, err
	}
	return provider.Fetch{Get: api.get, Pointer: acmeThin}, nil
}

// Reconciler lists the acme API's events the inbox never claimed, the
// first run going back ACME_RECONCILE_LOOKBACK (default 1h).
func (acmeProvider) Reconciler(ctx context.Context, env *provider.Env) (provider.Source, error) {
	lookback := env.Settings().Window("ACME_RECONCILE_LOOKBACK", time.Hour)
	api, err := newAcmeAPI(ctx, env)
	if err != nil || api == nil {
		return provider.Source{}, err
	}
	if env.Inbox == nil {
		return provider.Source{}, errors.New("acme source: no inbox to ask (Env.Inbox)")
	}
	return provider.Source{Lookback: lookback, List: &acmeEvents{api: api, inbox: env.Inbox}}, nil
}

// acmeAPI calls the acme API with its key.
type acmeAPI struct {
	base   string
	client *provider.Client
}

// newAcmeAPI reads ACME_API_URL and ACME_API_KEY; nil when neither is set.
func newAcmeAPI(ctx context.Context, env *provider.Env) (*acmeAPI, error) {
	r := env.Settings()
	base := r.String("ACME_API_URL", "")
	hasKey := env.HasSecret("ACME_API_KEY")
	if base == "" && !hasKey {
		return nil, nil
	}
	if base == "" {
		r.Problem("ACME_API_KEY is set but ACME_API_URL is empty")
	}
	if !hasKey {
		r.Problem("ACME_API_URL is set but ACME_API_KEY and ACME_API_KEY_ARN are empty")
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	key, err := env.Secret(ctx, "ACME_API_KEY")
	if err != nil {
		return nil, err
	}
	return &acmeAPI{base: strings.TrimSuffix(base, "/"), client: &provider.Client{Secret: key, HTTP: env.HTTPClient()}}, nil
}

// call GETs path and returns the 200 answer's body.
func (a *acmeAPI) call(ctx context.Context, path string) ([]byte, error) {
	resp, err := a.client.Do(ctx, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	})
	switch {
	case err != nil:
		return nil, err
	case resp.Status == http.StatusNotFound:
		return nil, webhook.Permanent(fmt.Errorf("acme: GET %s: not found", path))
	case resp.Status != http.StatusOK:
		return nil, fmt.Errorf("acme: GET %s: HTTP %d", path, resp.Status)
	}
	return resp.Body, nil
}

// get is Fetch.Get: the event id as the API serves it.
func (a *acmeAPI) get(ctx context.Context, id string, _ []byte) ([]byte, error) {
	return a.call(ctx, "/v1/events/"+url.PathEscape(id))
}

// acmeThin is Fetch.Pointer: a notification without the event's data.
func acmeThin(stored []byte) bool {
	var n struct {
		Data json.RawMessage `json:"data"`
	}
	return json.Unmarshal(stored, &n) != nil || len(n.Data) == 0
}

// acmeEvents is the reconcile source: the API's events in the window
// whose key the inbox has no claim of, each fetched whole.
type acmeEvents struct {
	api   *acmeAPI
	inbox provider.Inbox
}

type acmeListed struct {
	ID      string    `json:"id"`
	Type    string    `json:"type"`
	Created time.Time `json:"created"`
}

func (s *acmeEvents) Next(ctx context.Context, from, to time.Time) ([]webhook.Event, time.Time, error) {
	body, err := s.api.call(ctx, "/v1/events?from="+url.QueryEscape(from.Format(time.RFC3339))+"&to="+url.QueryEscape(to.Format(time.RFC3339)))
	if err != nil {
		return nil, from, err
	}
	var listed []acmeListed
	if err := json.Unmarshal(body, &listed); err != nil {
		return nil, from, fmt.Errorf("acme: the event list: %w", err)
	}
	var evs []webhook.Event
	for _, l := range listed {
		if err := webhook.ValidateEventID(l.ID); err != nil {
			return nil, from, fmt.Errorf("acme: listed event: %w", err)
		}
		claimed, err := s.inbox.Claimed(ctx, webhook.NewKey(acmeName, l.ID))
		if err != nil {
			return nil, from, err
		}
		if claimed {
			continue // it arrived
		}
		raw, err := s.api.get(ctx, l.ID, nil)
		if err != nil {
			return nil, from, err
		}
		evs = append(evs, webhook.Event{Provider: acmeName, ID: l.ID, Type: l.Type, Created: l.Created.UTC(), Raw: raw})
	}
	return evs, to, nil
}

// acmeVerifier checks X-Acme-Signature over the raw body, then reads it.
type acmeVerifier struct{ secrets []string }

func (v acmeVerifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	header := strings.TrimSpace(r.Header[acmeHeader])
	if header == "" {
		return nil, fmt.Errorf("acme: no X-Acme-Signature: %w", provider.ErrNoSignature)
	}
	sig, err := hex.DecodeString(header)
	if err != nil || !provider.BodySignedBy(sig, r.Body, v.secrets) {
		return nil, fmt.Errorf("acme: signature matches none of %d secrets: %w", len(v.secrets), provider.ErrBadSignature)
	}
	if err := provider.CheckJSONObject(acmeName, r.Body); err != nil {
		return nil, err
	}
	var ev acmeListed
	if err := json.Unmarshal(r.Body, &ev); err != nil || ev.Type == "" {
		return nil, fmt.Errorf("acme: %w", provider.ErrNotEvent)
	}
	if err := provider.CheckEventID(acmeName, "id", ev.ID); err != nil {
		return nil, err
	}
	return []webhook.Event{{Provider: acmeName, ID: ev.ID, Type: ev.Type, Created: ev.Created.UTC(), Raw: r.Body}}, nil
}

// acmeSender is the provider's test deliveries (its sample.go).
func acmeSender() sample.Sender {
	return sample.Sender{Provider: acmeProvider{}, Sign: func(ev sample.Event, secrets []string, _ time.Time) (webhook.Request, error) {
		if len(secrets) == 0 {
			return webhook.Request{}, errors.New("acme: no secret to sign with")
		}
		sig := provider.HMACSHA256([]byte(secrets[0]), ev.Body)
		return webhook.Request{Method: http.MethodPost, Body: ev.Body,
			Header: map[string]string{acmeHeader: hex.EncodeToString(sig), "content-type": "application/json"}}, nil
	}}
}
