package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/eventbridge"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/provider"
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
	hashes, _ := privacy.NewHasher(privacy.Keys{pipeline.SubjectKey}).Index(ctx, []provider.Subject{provider.EmailSubject("cli.jane@example.com")})
	it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour, Subjects: hashes})
	if err != nil {
		t.Fatal(err)
	}
	finishEvent(t, store, it, inbox.Done)
	// A second event of hers is parked: it keeps its payload until it has run.
	parked := webhook.Event{Provider: "stripe", ID: "evt_cli_parked", Type: "checkout.session.completed", Created: now,
		Raw: []byte(`{"id":"evt_cli_parked","data":{"object":{"object":"checkout.session","customer_email":"cli.jane@example.com"}}}`)}
	pit, err := store.Claim(ctx, inbox.Claim{Event: parked, At: now, TTL: time.Hour, Subjects: hashes})
	if err != nil {
		t.Fatal(err)
	}
	finishEvent(t, store, pit, inbox.Dead)
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

	out := run(export, "--email", "CLI.Jane@example.com")
	for _, want := range []string{"in 2 events", "stripe#evt_cli_erase  customer.created  done", "keeps the event as delivered until",
		"stripe#evt_cli_parked  checkout.session.completed  parked, waiting for a person"} {
		if !strings.Contains(out, want) {
			t.Errorf("export printed no %q:\n%s", want, out)
		}
	}
	out = run(erase, "--email", "cli.jane@example.com", "--dry-run")
	if !strings.Contains(out, "hookinbox found this person in 2 events") || !strings.Contains(out, "would be erased") {
		t.Errorf("erase --dry-run printed:\n%s", out)
	}
	if _, err := store.Payload(ctx, it.Key); err != nil {
		t.Fatalf("payload after a dry run: %v", err)
	}
	out = run(erase, "--subject", "email:cli.jane@example.com", "--by", "ticket-42")
	for _, want := range []string{"hookinbox found this person in 2 events", "stripe#evt_cli_erase  customer.created  done, received",
		": erased\n", "kept until it has finished, then erased", "1 event is not finished", "yours to erase"} {
		if !strings.Contains(out, want) {
			t.Errorf("erase printed no %q:\n%s", want, out)
		}
	}
	for _, jargon := range []string{"subject hash", "copies", "inline", "payload item"} {
		if strings.Contains(out, jargon) {
			t.Errorf("erase printed %q:\n%s", jargon, out)
		}
	}
	if _, err := store.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("payload after erase: %v, want ErrNotFound", err)
	}
	if _, err := store.Payload(ctx, pit.Key); err != nil {
		t.Errorf("the parked event's payload after erase: %v; want it kept until it has run", err)
	}
	var rep privacy.Report
	if err := json.Unmarshal([]byte(run(export, "--email", "cli.jane@example.com", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Events) != 2 || rep.Events[0].Removed != inbox.RemovedErased || !rep.Events[1].Waiting || rep.Waiting != 1 {
		t.Errorf("export after erase: %+v", rep)
	}
	var inspected bytes.Buffer
	if err := testApp().cmdInspect(ctx, []string{string(it.Key), "--state-file", path}, &inspected, &bytes.Buffer{}); err != nil || !strings.Contains(inspected.String(), "erased at") {
		t.Errorf("inspect after erase: %v\n%s", err, inspected.String())
	}
	inspected.Reset()
	if err := testApp().cmdInspect(ctx, []string{string(pit.Key), "--state-file", path}, &inspected, &bytes.Buffer{}); err != nil || !strings.Contains(inspected.String(), "an erasure waits for it") {
		t.Errorf("inspect of the parked event after erase: %v\n%s", err, inspected.String())
	}
	if audits, _ := store.Erasures(ctx); len(audits) != 1 || audits[0].By != "ticket-42" {
		t.Errorf("audit records %+v, want one by ticket-42", audits)
	}
}

// finishEvent runs one attempt of it that ends in status st, as the
// processor does: it indexes the claim's subjects first.
func finishEvent(t *testing.T, store *inbox.DynamoDB, it inbox.Item, st inbox.Status) {
	t.Helper()
	ctx := context.Background()
	if _, err := store.Lease(ctx, it.Key, "w1", it.ReceivedAt, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := store.IndexSubjects(ctx, it.Key, it.Subjects, it.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Finish(ctx, it.Key, "w1", inbox.Result{Status: st, At: it.ReceivedAt, Indexed: true}); err != nil {
		t.Fatal(err)
	}
}

// TestEraseAndExportSayWhenNoOneIsFound: an address that matches nothing
// is answered plainly, changes nothing, writes no audit record, and exits
// 3; with --json too.
func TestEraseAndExportSayWhenNoOneIsFound(t *testing.T) {
	emu, st := stackInEnv(t)
	path := localStateFile(t, emu, st)
	for _, args := range [][]string{
		{"erase", "--email", "nobody.here@example.com", "--by", "ticket-7"},
		{"erase", "--email", "nobody.here@example.com", "--by", "ticket-7", "--dry-run"},
		{"export", "--email", "nobody.here@example.com"},
		{"export", "--email", "nobody.here@example.com", "--json"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), append(args, "--state-file", path), &out, &errOut); code != 3 {
			t.Errorf("%v: exit %d, want 3\n%s%s", args, code, out.String(), errOut.String())
		}
		if !slices.Contains(args, "--json") && !strings.Contains(out.String(), "No one found") {
			t.Errorf("%v printed:\n%s", args, out.String())
		}
	}
	if audits, _ := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"]).Erasures(context.Background()); len(audits) != 0 {
		t.Errorf("audit records after erasing no one: %+v, want none", audits)
	}
}

// TestEraseNamesWhoAskedWithoutUSER: with $USER unset the audit record
// names the user running the command (os/user), never "unknown".
func TestEraseNamesWhoAskedWithoutUSER(t *testing.T) {
	t.Setenv("USER", "")
	who, err := requester("")
	var u *usageError
	if err != nil && !errors.As(err, &u) {
		t.Fatalf("requester: %v", err)
	}
	if err == nil && (who == "cli:" || strings.Contains(who, "unknown")) {
		t.Errorf("requester = %q, want cli:<user name>", who)
	}
	if who, err := requester(" ticket-9 "); who != "ticket-9" || err != nil {
		t.Errorf("requester(--by) = %q, %v", who, err)
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
// and takes none; erase claims those two in the inbox (marked to erase
// once they have run, and sent to the events queue), deletes their
// messages, leaves the third receivable, and its audit record counts
// them.
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
	at := time.Now().Add(-time.Hour)
	bodies := []string{
		string(verifytest.StripeEvent("checkout.session.completed", "evt_bridge_gone1", at, verifytest.WithCustomer("cus_bridge_gone"))),
		string(verifytest.StripeEvent("checkout.session.completed", "evt_bridge_gone2", at, verifytest.WithCustomer("cus_bridge_gone"))),
		string(verifytest.StripeEvent("checkout.session.completed", "evt_bridge_kept", at, verifytest.WithCustomer("cus_bridge_kept"))),
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
	if out := erase("--dry-run"); !strings.Contains(out, "Would also take 2 Stripe events naming this person out of the Stripe EventBridge dead-letter queue") {
		t.Errorf("erase --dry-run printed:\n%s", out)
	}
	if got := drainBodies(t, client, url, true); len(got) != 3 {
		t.Fatalf("after a dry run the queue holds %d messages, want 3", len(got))
	}
	if out := erase("--by", "ticket-bridge"); !strings.Contains(out, "Also took 2 Stripe events naming this person out of the Stripe EventBridge dead-letter queue") {
		t.Errorf("erase printed:\n%s", out)
	}
	got := drainBodies(t, client, url, false)
	if len(got) != 1 || !strings.Contains(got[0], "cus_bridge_kept") {
		t.Errorf("after erase the queue holds %q, want only the cus_bridge_kept event", got)
	}
	store := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	for _, k := range []webhook.Key{"stripe#evt_bridge_gone1", "stripe#evt_bridge_gone2"} {
		if it, err := store.Get(ctx, k); err != nil || it.Status != inbox.Received || !it.EraseWhenFinished {
			t.Errorf("%s after erase: %+v, %v; want it claimed, to run once and then be erased", k, it, err)
		}
	}
	audits, err := store.Erasures(ctx)
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
