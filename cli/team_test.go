package cli

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// depot is a team's own provider, as a team's module adds one: HMAC of
// the body in x-depot-signature, the id and type in the body.
type depot struct {
	provider.NoFetch
	provider.NoSource
}

func (depot) Name() string { return "depot" }
func (depot) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "DEPOT_WEBHOOK_SECRET"}
}
func (depot) Verifier(secrets []string, _ *provider.Env) (provider.Verifier, error) {
	return depotVerifier(secrets), provider.CheckSecrets("depot", secrets)
}

// depotSender is how tools send depot's deliveries.
var depotSender = sample.Sender{Provider: depot{}, Sign: depotSign, Help: "x-depot-signature (hex HMAC of the body)",
	Examples: []string{"hookinbox send depot parcel.sent"}}

func depotSign(ev sample.Event, secrets []string, _ time.Time) (webhook.Request, error) {
	secret, err := sample.FirstSecret("depot", secrets)
	if err != nil {
		return webhook.Request{}, err
	}
	return webhook.Request{Method: "POST", Body: ev.Body, Header: map[string]string{
		"x-depot-signature": hex.EncodeToString(provider.HMACSHA256([]byte(secret), ev.Body)),
	}}, nil
}

type depotVerifier []string

func (v depotVerifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	sig, err := hex.DecodeString(r.Header["x-depot-signature"])
	if err != nil || !provider.BodySignedBy(sig, r.Body, v) {
		return nil, provider.ErrBadSignature
	}
	var ev struct{ ID, Type string }
	if err := json.Unmarshal(r.Body, &ev); err != nil {
		return nil, provider.ErrNotEvent
	}
	return []webhook.Event{{Provider: "depot", ID: ev.ID, Type: ev.Type, Raw: r.Body}}, nil
}

// TestSendATeamsProvider: with a team's provider given to Main, `send
// depot parcel.sent` signs the team's payload of that name
// (testdata/depot/parcel.sent.json in the team's module) with the
// provider's signer, and the provider's verifier accepts it; without it,
// send names the providers it knows.
func TestSendATeamsProvider(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "testdata", "depot"), 0o755); err != nil {
		t.Fatal(err)
	}
	body := `{"id":"dp_1","type":"parcel.sent"}`
	if err := os.WriteFile(filepath.Join(dir, "testdata", "depot", "parcel.sent.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	var verified []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		evs, err := depotVerifier{"s3cret"}.Verify(r.Context(), webhook.Request{Header: map[string]string{"x-depot-signature": r.Header.Get("X-Depot-Signature")}, Body: raw})
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		verified = append(verified, evs[0].Key().String()+" "+evs[0].Type)
		fmt.Fprint(w, `{"status":"accepted"}`)
	}))
	defer srv.Close()
	args := []string{"depot", "parcel.sent", "--url", srv.URL, "--secret", "s3cret", "--state-file", filepath.Join(dir, "none.json")}

	if out, code := runSend(t, args...); code != 2 || !strings.Contains(out, `unknown provider "depot"`) {
		t.Errorf("without the team's provider: exit %d\n%s\nwant 2, unknown provider", code, out)
	}
	teamSenders = []sample.Sender{depotSender}
	t.Cleanup(func() { teamSenders = nil })
	out, code := runSend(t, args...)
	if code != 0 || !strings.Contains(out, "1/1 depot#dp_1 parcel.sent → accepted") {
		t.Errorf("send exited %d:\n%s\nwant depot#dp_1 parcel.sent accepted", code, out)
	}
	if want := []string{"depot#dp_1 parcel.sent"}; strings.Join(verified, ",") != strings.Join(want, ",") {
		t.Errorf("the endpoint verified %v, want %v", verified, want)
	}
}

// TestSendHelpNamesEveryProvider: send's help has each provider's line
// and examples, a team's too, from the provider itself.
func TestSendHelpNamesEveryProvider(t *testing.T) {
	teamSenders = []sample.Sender{depotSender}
	t.Cleanup(func() { teamSenders = nil })
	help := sendHelp(providers())
	for _, want := range []string{"  depot     x-depot-signature (hex HMAC of the body)\n", "\n  hookinbox send depot parcel.sent\n"} {
		if !strings.Contains(help, want) {
			t.Errorf("send's help lacks %q:\n%s", want, help)
		}
	}
}
