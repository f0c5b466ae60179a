package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/stripe/eventbridge"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestEraseAndExportOnTheLocalStack: export lists a person's event by
// email, erase --dry-run changes nothing, erase removes the payload and
// keeps the dedupe record, and export then says it was erased.
func TestEraseAndExportOnTheLocalStack(t *testing.T) {
	emu, st := stackInEnv(t)
	ctx := context.Background()
	store := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	now := time.Now()
	ev := webhook.Event{Provider: "stripe", ID: "evt_cli_erase", Type: "customer.created", Created: now,
		Raw: []byte(`{"id":"evt_cli_erase","data":{"object":{"object":"customer","id":"cus_cli","email":"cli.jane@example.com"}}}`)}
	it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	hashes, _ := privacy.NewHasher(privacy.Keys{pipeline.SubjectKey}).Index(ctx, []provider.Subject{provider.EmailSubject("cli.jane@example.com")})
	if err := store.IndexSubjects(ctx, it.Key, hashes, it.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	path := localStateFile(t, emu, st)
	run := func(cmd func(context.Context, []string, *bytes.Buffer) error, args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := cmd(ctx, append(args, "--state-file", path), &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	erase := func(ctx context.Context, args []string, out *bytes.Buffer) error {
		return cmdErase(ctx, args, out, &bytes.Buffer{})
	}
	export := func(ctx context.Context, args []string, out *bytes.Buffer) error {
		return cmdExport(ctx, args, out, &bytes.Buffer{})
	}

	if out := run(export, "--email", "CLI.Jane@example.com"); !strings.Contains(out, "stripe#evt_cli_erase") || !strings.Contains(out, "inline") {
		t.Errorf("export printed:\n%s", out)
	}
	if out := run(erase, "--email", "cli.jane@example.com", "--dry-run"); !strings.Contains(out, "would erase 1 copies in 1 events") {
		t.Errorf("erase --dry-run printed:\n%s", out)
	}
	if _, err := store.Payload(ctx, it.Key); err != nil {
		t.Fatalf("payload after a dry run: %v", err)
	}
	if out := run(erase, "--subject", "email:cli.jane@example.com", "--by", "ticket-42"); !strings.Contains(out, "erased 1 copies in 1 events") {
		t.Errorf("erase printed:\n%s", out)
	}
	if _, err := store.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("payload after erase: %v, want ErrNotFound", err)
	}
	var rep privacy.Report
	if err := json.Unmarshal([]byte(run(export, "--email", "cli.jane@example.com", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Events) != 1 || rep.Events[0].Removed != inbox.RemovedErased || rep.Copies != 0 {
		t.Errorf("export after erase: %+v", rep)
	}
	var inspected bytes.Buffer
	if err := cmdInspect(ctx, []string{string(it.Key), "--state-file", path}, &inspected, &bytes.Buffer{}); err != nil || !strings.Contains(inspected.String(), "erased at") {
		t.Errorf("inspect after erase: %v\n%s", err, inspected.String())
	}
	if audits, _ := store.Erasures(ctx); len(audits) != 1 || audits[0].By != "ticket-42" {
		t.Errorf("audit records %+v, want one by ticket-42", audits)
	}
}

// TestEraseNeedsASubject: a subject that is not one is a usage error,
// before anything is read.
func TestEraseNeedsASubject(t *testing.T) {
	for _, args := range [][]string{{}, {"--subject", "cus_1"}, {"--email", "nobody"}} {
		err := cmdErase(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		var u *usageError
		if !errors.As(err, &u) {
			t.Errorf("erase %v: %v, want a usage error", args, err)
		}
	}
}

// TestEraseSweepsTheStripeEventBridgeDLQ: with a Stripe EventBridge DLQ
// in the stack, erase --dry-run counts the two events naming the subject
// and deletes none; erase deletes those two, leaves the third
// receivable, and its audit record counts them.
func TestEraseSweepsTheStripeEventBridgeDLQ(t *testing.T) {
	emu, st := stackInEnv(t)
	ctx := context.Background()
	client := emu.SQS()
	q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(strings.ReplaceAll(t.Name(), "/", "-"))})
	if err != nil {
		t.Fatal(err)
	}
	url := aws.ToString(q.QueueUrl)
	path := localStateFile(t, emu, st)
	state, err := loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	state.Queues[eventbridge.DLQ] = stateQueue{URL: url}
	if err := writeState(path, state); err != nil {
		t.Fatal(err)
	}
	bodies := []string{
		`{"data":{"object":{"object":"charge","customer":"cus_bridge_gone"}}}`,
		`{"data":{"object":{"object":"customer","id":"cus_bridge_gone","email":"bridge.gone@example.com"}}}`,
		`{"data":{"object":{"object":"customer","id":"cus_bridge_kept","email":"bridge.kept@example.com"}}}`,
	}
	for i, b := range bodies {
		env := fmt.Sprintf(`{"version":"0","id":"eb-%d","detail-type":"charge.succeeded","source":"aws.partner/stripe.com/ed_test","detail":%s}`, i, b)
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(env)}); err != nil {
			t.Fatal(err)
		}
	}
	erase := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := cmdErase(ctx, append(args, "--subject", "stripe:cus_bridge_gone", "--state-file", path), &out, &bytes.Buffer{}); err != nil {
			t.Fatalf("erase %v: %v", args, err)
		}
		return out.String()
	}
	if out := erase("--dry-run"); !strings.Contains(out, "and 2 Stripe events in the Stripe EventBridge DLQ") {
		t.Errorf("erase --dry-run printed:\n%s", out)
	}
	if got := drainBodies(t, client, url, true); len(got) != 3 {
		t.Fatalf("after a dry run the queue holds %d messages, want 3", len(got))
	}
	if out := erase("--by", "ticket-bridge"); !strings.Contains(out, "and 2 Stripe events in the Stripe EventBridge DLQ") {
		t.Errorf("erase printed:\n%s", out)
	}
	got := drainBodies(t, client, url, false)
	if len(got) != 1 || !strings.Contains(got[0], "cus_bridge_kept") {
		t.Errorf("after erase the queue holds %q, want only the cus_bridge_kept event", got)
	}
	audits, err := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"]).Erasures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var queued []int
	for _, a := range audits {
		if a.By == "ticket-bridge" {
			queued = append(queued, a.Queued)
		}
	}
	if diff := cmp.Diff([]int{2}, queued); diff != "" {
		t.Errorf("audit records' Queued (-want +got):\n%s", diff)
	}
}

// drainBodies receives every message of url (a bounded loop) and returns
// their bodies; with release it then makes them visible again.
func drainBodies(t *testing.T, client *sqs.Client, url string, release bool) []string {
	t.Helper()
	ctx := context.Background()
	var bodies, handles []string
	for range 10 {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, VisibilityTimeout: 30, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
			handles = append(handles, aws.ToString(m.ReceiptHandle))
		}
	}
	for _, h := range handles {
		if !release {
			break
		}
		if _, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(h)}); err != nil {
			t.Fatal(err)
		}
	}
	return bodies
}
