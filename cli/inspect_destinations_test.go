package cli

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestInspectShowsDestinationAttempts: after a destination answered 503
// and another 200, inspect prints each destination's attempts and last
// answer, in text and in --json.
func TestInspectShowsDestinationAttempts(t *testing.T) {
	emu, st := stackInEnv(t)
	ctx := context.Background()
	table := st.Tables["InboxTable"]
	path := filepath.Join(t.TempDir(), "state.json")
	state := &devState{PID: os.Getpid(), Region: devstack.Region, StackName: st.Name,
		Endpoints: map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": emu.DynamoDBURL, "AWS_ENDPOINT_URL_SQS": emu.SQSURL},
		Env:       emu.EnvMap(), Tables: st.Tables}
	if err := writeState(path, state); err != nil {
		t.Fatal(err)
	}
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer down.Close()
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer up.Close()
	const arn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:s-AbCdEf"
	set, err := destination.New([]destination.Config{
		{Name: "crm", URL: down.URL, Events: []string{"*"}, Secret: arn},
		{Name: "n8n", URL: up.URL, Events: []string{"*"}, Secret: arn},
	}, destination.Options{
		Secrets: func(context.Context, string) ([]string, error) {
			return []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, nil
		},
		Log: destination.NewLog(emu.DynamoDB(), table, time.Hour), LocalHTTP: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ev := webhook.Event{Provider: "stripe", ID: "evt_dest_inspect", Type: "invoice.paid", Created: now, Received: now, Raw: []byte(`{}`)}
	if _, err := inbox.NewDynamoDB(emu.DynamoDB(), table).Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	effectLedger := ledger.New(emu.DynamoDB(), table, time.Hour)
	if err := set.Wrap(nil).Handle(ctx, ev, effectLedger.For(ev.Key())); !errors.Is(err, destination.ErrRetry) {
		t.Fatalf("deliver: %v; want crm's 503 to be retried", err)
	}

	var out, errOut strings.Builder
	if err := testApp().cmdInspect(ctx, []string{string(ev.Key()), "--state-file", path}, &out, &errOut); err != nil {
		t.Fatalf("inspect: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"Destinations: 2", "crm", "not delivered", "attempts 1, last 503 Service Unavailable",
		"n8n", "last 200 OK", destination.WebhookID(ev.Key(), "crm")} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect printed no %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := testApp().cmdInspect(ctx, []string{string(ev.Key()), "--json", "--state-file", path}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var got inspection
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil || len(got.Destinations) != 2 ||
		got.Destinations[0].LastStatus != 503 || !got.Destinations[1].Delivered {
		t.Errorf("inspect --json: destinations %+v, %v; want crm 503, n8n delivered", got.Destinations, err)
	}
}

// TestInspectEscapesWhatCameFromOutside: a destination's answer, an event
// type, a last error, an effect's result and a payload may hold control
// characters (a terminal escape that clears the screen or retitles the
// window, a bidi override): inspect prints them escaped, so what a
// person reads is what is stored.
func TestInspectEscapesWhatCameFromOutside(t *testing.T) {
	const hostile = "400 \x1b[2J\x1b]0;pwned\x07\u202egnp.exe\r\x00\xff é"
	const escaped = `400 \x1b[2J\x1b]0;pwned\a\u202egnp.exe\r\x00\xff é`
	var out strings.Builder
	printInspection(&out, inbox.Item{Key: "shopify#a\x1bb", EventType: "orders/paid" + hostile, Status: inbox.Dead, LastError: hostile, Outcome: hostile},
		[]effects.Record{{Effect: "destination:crm", Result: hostile}})
	printDeliveries(&out, []destination.Attempts{{Destination: "crm", LastAnswer: hostile}})
	got := out.String()
	for i, r := range got {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || (r == utf8.RuneError && !strings.HasPrefix(got[i:], "\uFFFD"))) {
			t.Fatalf("inspect printed %U raw at %d:\n%q", r, i, got)
		}
	}
	if n := strings.Count(got, escaped); n != 5 || !strings.Contains(got, `shopify#a\x1bb`) {
		t.Errorf("inspect printed the hostile text escaped %d times (want 5: type, last error, outcome, result, answer):\n%s", n, got)
	}
	if got, want := printable("{\n\t\"a\": \"\x1b\"\n}", "\n\t"), "{\n\t\"a\": \"\\x1b\"\n}"; got != want {
		t.Errorf("payload printed as %q; want %q (line breaks and tabs kept)", got, want)
	}
}
