package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/webhook"
)

// commandAfter returns the aws command printed on the line after the one
// that starts with label.
func commandAfter(t *testing.T, text, label string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), label+":") && i+1 < len(lines) {
			return strings.TrimSpace(lines[i+1])
		}
	}
	t.Fatalf("no command after %q in:\n%s", label, text)
	return ""
}

// runUpdateItem runs an `aws dynamodb update-item` command line (its
// single-quoted options) with the SDK.
func runUpdateItem(t *testing.T, db *dynamodb.Client, line string) {
	t.Helper()
	if !strings.HasPrefix(line, "aws dynamodb update-item ") {
		t.Fatalf("not an update-item command: %s", line)
	}
	opts := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z-]+) ('[^']*'|\S+)`).FindAllStringSubmatch(line, -1) {
		opts[m[1]] = strings.Trim(m[2], "'")
	}
	attrs := func(js string) map[string]types.AttributeValue {
		var m map[string]map[string]string
		if js == "" {
			return nil
		}
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		av := map[string]types.AttributeValue{}
		for k, v := range m {
			av[k] = &types.AttributeValueMemberS{Value: v["S"]}
		}
		return av
	}
	var names map[string]string
	if err := json.Unmarshal([]byte(opts["expression-attribute-names"]), &names); err != nil {
		t.Fatal(err)
	}
	_, err := db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(opts["table-name"]), Key: attrs(opts["key"]),
		UpdateExpression: aws.String(opts["update-expression"]), ExpressionAttributeNames: names,
		ExpressionAttributeValues: attrs(opts["expression-attribute-values"]),
	})
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
}

// TestInspectShowsOpenIntentsAndHowToResolveThem: an event parked because
// its welcome email's outcome is unknown shows the open intent, its
// idempotency key and SES tag, and two commands; the printed commands,
// run as written, resolve it: "it ran" makes the email a record the next
// attempt skips, "it did not" lets the next attempt send it.
func TestInspectShowsOpenIntentsAndHowToResolveThem(t *testing.T) {
	emu, st := stackInEnv(t)
	ctx := context.Background()
	table := st.Tables["InboxTable"]
	store := inbox.NewDynamoDB(emu.DynamoDB(), table)
	effectLedger := ledger.New(emu.DynamoDB(), table, time.Hour)
	path := filepath.Join(t.TempDir(), "state.json")
	state := &devState{PID: os.Getpid(), Region: devstack.Region, StackName: st.Name,
		Endpoints: map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": emu.DynamoDBURL, "AWS_ENDPOINT_URL_SQS": emu.SQSURL},
		Env:       emu.EnvMap(), Tables: st.Tables}
	if err := writeState(path, state); err != nil {
		t.Fatal(err)
	}

	for _, ran := range []bool{true, false} {
		id := "evt_intent_unsent"
		if ran {
			id = "evt_intent_sent"
		}
		now := time.Now()
		ev := webhook.Event{Provider: "stripe", ID: id, Type: "checkout.session.completed", Created: now, Raw: []byte(`{"id":"` + id + `"}`)}
		it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Lease(ctx, it.Key, "w", now, time.Minute); err != nil {
			t.Fatal(err)
		}
		send := func(context.Context, string) (string, error) { return "", errors.New("ses: i/o timeout") }
		unknown := effects.AtMostOnce(ctx, effectLedger.For(it.Key), "welcome-email", send)
		if !errors.Is(unknown, effects.ErrOutcomeUnknown) {
			t.Fatalf("AtMostOnce: %v, want ErrOutcomeUnknown", unknown)
		}
		if _, err := store.Finish(ctx, it.Key, "w", inbox.Result{Status: inbox.Dead, Error: unknown.Error(), At: now}); err != nil {
			t.Fatal(err)
		}

		var out, errOut strings.Builder
		if err := testApp().cmdInspect(ctx, []string{string(it.Key), "--state-file", path}, &out, &errOut); err != nil {
			t.Fatalf("inspect: %v\n%s", err, errOut.String())
		}
		text := out.String()
		ik := effects.IdempotencyKey(it.Key, "welcome-email")
		for _, want := range []string{"Open intents: 1", "welcome-email", ik, "whether it ran, where the effect acts, by its key",
			"hookinbox replay --key '" + string(it.Key) + "'"} {
			if !strings.Contains(text, want) {
				t.Errorf("inspect printed no %q:\n%s", want, text)
			}
		}
		out.Reset()
		if err := testApp().cmdInspect(ctx, []string{string(it.Key), "--json", "--state-file", path}, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		var got inspection
		if err := json.Unmarshal([]byte(out.String()), &got); err != nil || len(got.OpenIntents) != 1 || got.OpenIntents[0].IdempotencyKey != ik {
			t.Fatalf("inspect --json: open intents %+v, err %v", got.OpenIntents, err)
		}

		// Run the printed command for the answer, as the operator would.
		cmd := "it did not"
		if ran {
			cmd = "it ran"
		}
		runUpdateItem(t, emu.DynamoDB(), commandAfter(t, text, cmd))
		if _, open, err := effectLedger.Read(ctx, it.Key); err != nil || len(open) != 0 {
			t.Errorf("after %q: open intents %+v, err %v; want none", cmd, open, err)
		}
		sent := 0
		err = effects.AtMostOnce(ctx, effectLedger.For(it.Key), "welcome-email", func(context.Context, string) (string, error) { sent++; return "msg", nil })
		if err != nil || sent != map[bool]int{true: 0, false: 1}[ran] {
			t.Errorf("after %q: the next attempt sent %d emails, err %v", cmd, sent, err)
		}
	}
}

// TestInspectShowsTheNotFoundWindow: a GoPay payment GoPay did not know
// shows until when its notifications are duplicates, in text and JSON.
func TestInspectShowsTheNotFoundWindow(t *testing.T) {
	until := time.Date(2026, 12, 1, 12, 15, 0, 0, time.UTC)
	it := inbox.Item{Key: "gopay#3000000001", Status: inbox.Ignored, Outcome: "not found at gopay", RenewAfter: until}
	var text strings.Builder
	printInspection(&text, it, nil)
	if !strings.Contains(text.String(), "renew after") || !strings.Contains(text.String(), "not fetched") {
		t.Errorf("inspect text has no renew after line:\n%s", text.String())
	}
	b, err := json.Marshal(viewOf(it))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"renew_after":"2026-12-01T12:15:00Z"`) {
		t.Errorf("inspect JSON %s has no renew_after", b)
	}
}

// TestInspectAndReplayReadABodyKeptInS3: a parked event whose body is over
// the item limit is shown whole by inspect, with the object that keeps it,
// and replayed by key.
func TestInspectAndReplayReadABodyKeptInS3(t *testing.T) {
	emu, st := stackInEnv(t)
	ctx := context.Background()
	store := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"]).WithBodies(inbox.NewBodies(emu.S3(), st.Buckets["BodyBucket"]))
	path := localStateFile(t, emu, st)

	now := time.Now()
	raw := []byte(`{"ref":"refs/heads/main","padding":"` + strings.Repeat("a", inbox.MaxPayloadBytes) + `"}`)
	c := inbox.Claim{Event: webhook.Event{Provider: "github", ID: "d-bigpark", Type: "push", Created: now, Raw: raw}, At: now, TTL: time.Hour}
	it, err := store.Claim(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutPayload(ctx, c.PayloadItem(), raw); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Lease(ctx, it.Key, "w", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Finish(ctx, it.Key, "w", inbox.Result{Status: inbox.Dead, Error: "parked", At: now}); err != nil {
		t.Fatal(err)
	}

	var out, errOut strings.Builder
	if err := testApp().cmdInspect(ctx, []string{string(it.Key), "--json", "--state-file", path}, &out, &errOut); err != nil {
		t.Fatalf("inspect: %v\n%s", err, errOut.String())
	}
	var got inspection
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, got.Payload); err != nil || compact.String() != string(raw) || got.Item.PayloadObject != it.PayloadObject {
		t.Errorf("inspect --json: payload of %d bytes (%v), object %q; want the %d-byte body and %q", compact.Len(), err, got.Item.PayloadObject, len(raw), it.PayloadObject)
	}

	out.Reset()
	if err := testApp().cmdReplay(ctx, []string{"--key", string(it.Key), "--json", "--state-file", path}, &out, &errOut); err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut.String())
	}
	if after, err := store.Get(ctx, it.Key); err != nil || after.Status != inbox.Failed {
		t.Errorf("after replay: %s, %v; want FAILED, queued again (replay said %s)", after.Status, err, out.String())
	}
}

func TestInspectCommandLine(t *testing.T) {
	checkCommandLines(t, Options{}, []commandLine{
		{[]string{"inspect", "--help"}, 0, "<provider>#<event id>", ""},
		{[]string{"inspect"}, 2, "", "want one event key"},
		{[]string{"inspect", "#evt_1"}, 2, "", "not <provider>#<event id>"},
		{[]string{"inspect", "stripe#evt_1", "--state-file", "/nonexistent/hookinbox.json"}, 1, "", "start one with `make dev`"},
	})
}
