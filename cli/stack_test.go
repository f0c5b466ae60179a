package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/webhook"
)

// localStateFile writes the state file hookinbox dev would write for the
// stack st on emu and returns its path.
func localStateFile(t *testing.T, emu *devstack.Emulators, st *devstack.Stack) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.json")
	state := &devState{
		PID: os.Getpid(), Region: devstack.Region, StackName: st.Name,
		Endpoints: map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": emu.DynamoDBURL, "AWS_ENDPOINT_URL_SQS": emu.SQSURL},
		Env:       emu.EnvMap(), Tables: st.Tables, Buckets: st.Buckets, Queues: map[string]stateQueue{},
	}
	for id, q := range st.Queues {
		state.Queues[id] = stateQueue{Name: q.Name, URL: q.URL, ARN: q.ARN}
	}
	if err := writeState(path, state); err != nil {
		t.Fatal(err)
	}
	return path
}

// closedAddr returns a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	return l.Addr().String()
}

// deployableSubset returns the part of template.yaml moto's CloudFormation
// can create: its DynamoDB tables and SQS queues that no condition turns
// off, and the outputs that name them. (moto knows neither SAM's transform nor alarms on metrics:
// the functions, API, alarms and dashboard are left out, and no command
// here reads them.)
func deployableSubset(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	out := &yaml.Node{Kind: yaml.MappingNode}
	add := func(parent *yaml.Node, key string, value *yaml.Node) {
		parent.Content = append(parent.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, value)
	}
	field := func(m *yaml.Node, key string) *yaml.Node {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
		return nil
	}
	kept := map[string]bool{}
	resources, outputs := &yaml.Node{Kind: yaml.MappingNode}, &yaml.Node{Kind: yaml.MappingNode}
	res := field(root, "Resources")
	for i := 0; i+1 < len(res.Content); i += 2 {
		r := res.Content[i+1]
		typ := field(r, "Type")
		// A resource under a condition (a feature a parameter turns on)
		// is left out with the parameters the condition reads.
		if typ != nil && (typ.Value == "AWS::DynamoDB::Table" || typ.Value == "AWS::SQS::Queue") && field(r, "Condition") == nil {
			add(resources, res.Content[i].Value, res.Content[i+1])
			kept[res.Content[i].Value] = true
		}
	}
	outs := field(root, "Outputs")
	for i := 0; i+1 < len(outs.Content); i += 2 {
		if v := field(outs.Content[i+1], "Value"); v != nil && v.Tag == "!Ref" && kept[v.Value] {
			add(outputs, outs.Content[i].Value, outs.Content[i+1])
		}
	}
	add(out, "AWSTemplateFormatVersion", field(root, "AWSTemplateFormatVersion"))
	add(out, "Resources", resources)
	add(out, "Outputs", outputs)
	b, err := yaml.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// deployedStack creates, on the test binary's moto_server, a CloudFormation
// stack of template.yaml's tables and queues (deployableSubset) under a
// fresh name, points this test's AWS configuration (as the AWS CLI reads
// it) at moto only, and deletes the stack when the test ends.
func deployedStack(t *testing.T) (string, aws.Config) {
	t.Helper()
	m := devstacktest.MotoForTest(t)
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": m.URL, "AWS_ENDPOINT_URL_DYNAMODB": "", "AWS_ENDPOINT_URL_SQS": "",
		// moto 5.2's CloudWatch does not speak the SDK's protocol (CBOR):
		// an address that refuses makes status's CloudWatch reads fail
		// at once, as with no cloudwatch:GetMetricData right.
		"AWS_ENDPOINT_URL_CLOUDWATCH": "http://" + closedAddr(t),
		"AWS_REGION":                  devstack.Region, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "none"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "1",
	} {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfn := cloudformation.NewFromConfig(cfg)
	name := "deployed-" + devstack.UniqueStackName()
	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String(name), TemplateBody: aws.String(string(deployableSubset(t)))}); err != nil {
		t.Fatalf("create stack %s on moto: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := cfn.DeleteStack(context.Background(), &cloudformation.DeleteStackInput{StackName: aws.String(name)}); err != nil {
			t.Errorf("delete stack %s: %v", name, err)
		}
	})
	return name, cfg
}

// TestOperatingADeployedStack runs inspect, status and replay with --stack
// against a CloudFormation stack made from template.yaml (on moto): each
// finds the table and queues in the stack's outputs; inspect and status
// change nothing (the inbox item, its ledger and both queues read the same
// after them); replay --dry-run changes nothing either, and replay does
// what it says.
func TestOperatingADeployedStack(t *testing.T) {
	name, cfg := deployedStack(t)
	ctx := context.Background()
	outs, err := stackOutputs(ctx, cloudformation.NewFromConfig(cfg), name)
	if err != nil {
		t.Fatal(err)
	}
	table, eventsURL, dlqURL := outs[outputInboxTable], outs[outputEventsQueue], outs[outputDLQ]
	if table != name+"-inbox" || !strings.HasSuffix(eventsURL, "/"+name+"-events") || !strings.HasSuffix(dlqURL, "/"+name+"-events-dlq") {
		t.Fatalf("stack outputs %v", outs)
	}
	db, sq := dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	store := inbox.NewDynamoDB(db, table)
	effectLedger := ledger.New(db, table, time.Hour)
	events, dlq := queue.New(sq, eventsURL), queue.New(sq, dlqURL)

	// A Shopify event whose stock effect ran, then parked; and a Stripe
	// claim stuck for 20 minutes.
	now := time.Now()
	ev := webhook.Event{Provider: "shopify", ID: "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043", Type: "orders/paid", Created: now, Raw: []byte(`{"id":820982911946154508}`)}
	it := parkDead(t, store, dlq, ev, "loyalty service refused", 5, func(key webhook.Key) error {
		return effects.DoResult(ctx, effectLedger.For(key), "decrement-stock", func(context.Context, string) (string, error) { return "applied", nil })
	})
	stuck := webhook.Event{Provider: "stripe", ID: "evt_stuck", Type: "invoice.paid", Created: now.Add(-20 * time.Minute), Raw: []byte(`{}`)}
	if _, err := store.Claim(ctx, inbox.Claim{Event: stuck, At: now.Add(-20 * time.Minute), TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}

	// What the commands must leave as it is.
	type snapshot struct {
		Item          inbox.Item
		Effects       []effects.Record
		Events, DLQ   queue.Depth
		StuckAttempts int
	}
	look := func() snapshot {
		t.Helper()
		var s snapshot
		var err error
		if s.Item, err = store.Get(ctx, it.Key); err != nil {
			t.Fatal(err)
		}
		if s.Effects, _, err = effectLedger.Read(ctx, it.Key); err != nil {
			t.Fatal(err)
		}
		if s.Events, err = events.Depth(ctx); err != nil {
			t.Fatal(err)
		}
		if s.DLQ, err = dlq.Depth(ctx); err != nil {
			t.Fatal(err)
		}
		st, err := store.Get(ctx, stuck.Key())
		if err != nil {
			t.Fatal(err)
		}
		s.StuckAttempts = st.Attempts
		return s
	}
	before := look()
	if before.DLQ.Visible != 1 {
		t.Fatalf("DLQ depth %+v before the commands, want the one parked message", before.DLQ)
	}
	unchanged := func(after string) {
		t.Helper()
		if diff := cmp.Diff(before, look()); diff != "" {
			t.Errorf("after %s the stack changed (-before +after):\n%s", after, diff)
		}
	}
	noLocal := []string{"--state-file", filepath.Join(t.TempDir(), "none.json")}
	run := func(cmd func(context.Context, []string, io.Writer, io.Writer) error, args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := cmd(ctx, append(append(args, "--stack", name), noLocal...), &out, &errOut); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, errOut.String())
		}
		return out.String(), errOut.String()
	}

	out, errOut := run(testApp().cmdInspect, string(it.Key))
	for _, want := range []string{"status          DEAD", "loyalty service refused", "decrement-stock", "applied"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect printed no %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "AWS stack "+name+" in "+devstack.Region+" (table "+table+")") {
		t.Errorf("inspect's stderr %q does not say which stack it read", errOut)
	}
	out, _ = run(testApp().cmdInspect, string(it.Key), "--json")
	var got inspection
	var payload bytes.Buffer
	if err := json.Unmarshal([]byte(out), &got); err != nil || json.Compact(&payload, got.Payload) != nil ||
		got.Item.Status != inbox.Dead || len(got.Effects) != 1 || payload.String() != string(ev.Raw) {
		t.Errorf("inspect --json: %+v (%v)", got, err)
	}
	// With the table named, inspect needs nothing from CloudFormation.
	var errOut2 bytes.Buffer
	if err := testApp().cmdInspect(ctx, append([]string{string(it.Key), "--table", table, "--stack", "no-such-stack"}, noLocal...), io.Discard, &errOut2); err != nil {
		t.Errorf("inspect --table: %v\n%s", err, errOut2.String())
	}
	unchanged("inspect")

	out, _ = run(testApp().cmdStatus, "--json")
	var r statusReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("status --json printed more than JSON: %v\n%s", err, out)
	}
	if r.Source != "aws" || r.Stack != name || r.DLQ.total() != 1 || r.StuckClaims != 1 || r.EventsQueue.Name != name+"-events" {
		t.Errorf("status report %+v", r)
	}
	if o := r.OldestUnfinished; o == nil || o.Key != "stripe#evt_stuck" || o.AgeSeconds < 19*60 {
		t.Errorf("oldest unfinished %+v, want stripe#evt_stuck 20 minutes old", o)
	}
	if want := "hookinbox replay --all --dry-run --stack " + name; len(r.Replay) != 2 || r.Replay[0] != want {
		t.Errorf("replay commands %q, want %q first", r.Replay, want)
	}
	// Only CloudWatch (the counts and the message age) could not be read.
	if len(r.Problems) != 2 || !strings.HasPrefix(r.Problems[0], "counts: CloudWatch") || !strings.HasPrefix(r.Problems[1], "age of the oldest message: CloudWatch") {
		t.Errorf("problems %q, want the two CloudWatch reads", r.Problems)
	}
	unchanged("status")

	out, _ = run(testApp().cmdReplay, "--all", "--dry-run")
	if !strings.Contains(out, "would replay") || !strings.Contains(out, string(it.Key)) {
		t.Errorf("replay --all --dry-run printed:\n%s", out)
	}
	unchanged("replay --dry-run")

	out, _ = run(testApp().cmdReplay, "--all", "--json")
	var sum replay.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Moved != 1 {
		t.Fatalf("replay --all: %+v (%v)\n%s", sum, err, out)
	}
	after := look()
	if after.Item.Status != inbox.Failed || after.DLQ.Total() != 0 || after.Events.Visible != 1 {
		t.Errorf("after the replay: status %s, DLQ %+v, events queue %+v; want FAILED, empty, one message", after.Item.Status, after.DLQ, after.Events)
	}
}

// TestDeployedStackNotFound: a stack CloudFormation does not know is an
// error that says what to pass, and nothing else is read.
func TestDeployedStackNotFound(t *testing.T) {
	deployedStack(t)
	var out, errOut bytes.Buffer
	err := testApp().cmdStatus(context.Background(), []string{"--stack", "no-such-stack", "--state-file", filepath.Join(t.TempDir(), "none.json")}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no-such-stack") || !strings.Contains(err.Error(), "--table, --queue-url and --dlq-url") {
		t.Errorf("status --stack no-such-stack: %v, want the stack named and what to pass instead", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}

// TestWithoutALocalStackTheCommandsAskForAStack: with no local stack
// running and no --stack, inspect, status and replay talk to no AWS
// account; they say how to start one or name a deployed one.
func TestWithoutALocalStackTheCommandsAskForAStack(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none.json")
	for name, cmd := range map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"inspect": func(ctx context.Context, a []string, o, e io.Writer) error {
			return testApp().cmdInspect(ctx, append([]string{"stripe#evt_1"}, a...), o, e)
		},
		"status": testApp().cmdStatus,
		"replay": func(ctx context.Context, a []string, o, e io.Writer) error {
			return testApp().cmdReplay(ctx, append([]string{"--all", "--dry-run"}, a...), o, e)
		},
	} {
		var out, errOut bytes.Buffer
		err := cmd(context.Background(), []string{"--state-file", none}, &out, &errOut)
		if err == nil || !errors.Is(err, errNoStack) || !strings.Contains(err.Error(), "make dev") || !strings.Contains(err.Error(), "--stack NAME") {
			t.Errorf("%s: %v, want no local stack, and both ways out", name, err)
		}
	}
}

// TestGuardRefusesBeforeSending: a client built from a guarded
// configuration refuses an operation the guard does not allow without
// sending it, and sends the ones it allows.
func TestGuardRefusesBeforeSending(t *testing.T) {
	cfg := aws.Config{
		Region: devstack.Region, Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String("http://" + closedAddr(t)), Retryer: func() aws.Retryer { return aws.NopRetryer{} },
	}
	ctx := context.Background()
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}}
	ro := cfg.Copy()
	guard(&ro, readsOnly)
	db, sq := dynamodb.NewFromConfig(ro), sqs.NewFromConfig(ro)
	for op, err := range map[string]error{
		"PutItem": func() error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: key})
			return err
		}(),
		"UpdateItem": func() error {
			_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("t"), Key: key})
			return err
		}(),
		"SendMessage": func() error {
			_, err := sq.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String("q"), MessageBody: aws.String("b")})
			return err
		}(),
		"ReceiveMessage": func() error {
			_, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String("q")})
			return err
		}(),
	} {
		if !errors.Is(err, errNotAllowed) {
			t.Errorf("%s through a read-only client: %v, want it refused", op, err)
		}
	}
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key}); err == nil || errors.Is(err, errNotAllowed) {
		t.Errorf("GetItem through a read-only client: %v, want it sent (and the closed port to refuse it)", err)
	}

	peek := cfg.Copy()
	guard(&peek, readsAndPeeks)
	sq = sqs.NewFromConfig(peek)
	if _, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String("q")}); errors.Is(err, errNotAllowed) {
		t.Errorf("ReceiveMessage in a dry run: %v, want it sent", err)
	}
	if _, err := sq.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String("q"), ReceiptHandle: aws.String("r")}); !errors.Is(err, errNotAllowed) {
		t.Errorf("DeleteMessage in a dry run: %v, want it refused", err)
	}
}

// parkDead plays an event that ended DEAD with reason after attempts:
// claimed now with its payload, leased, run (run, if not nil), finished
// DEAD and parked in dlq.
func parkDead(t *testing.T, store *inbox.DynamoDB, dlq *queue.Queue, ev webhook.Event, reason string, attempts int, run func(webhook.Key) error) inbox.Item {
	t.Helper()
	ctx, now := context.Background(), time.Now()
	it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutPayload(ctx, it, ev.Raw); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Lease(ctx, it.Key, "w", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if run != nil {
		if err := run(it.Key); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Finish(ctx, it.Key, "w", inbox.Result{Status: inbox.Dead, Error: reason, At: now}); err != nil {
		t.Fatal(err)
	}
	env := queue.Envelope{Key: it.Key, Type: ev.Type}
	if err := dlq.Park(ctx, env.Marshal(), env, reason, attempts, now); err != nil {
		t.Fatal(err)
	}
	return it
}
