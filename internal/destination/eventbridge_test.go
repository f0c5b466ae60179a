package destination_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestEventBridgeDestinationOnMoto: a bus destination puts the event on
// the bus with source hookinbox.<provider>, detail-type its type and the
// body as detail (read back through a rule to an SQS queue); an event too
// large for one entry is parked and nothing is put; a bus that does not
// exist parks the event.
func TestEventBridgeDestinationOnMoto(t *testing.T) {
	m := devstacktest.MotoForTest(t)
	cfg := (&devstack.Emulators{}).AWSConfig()
	cfg.BaseEndpoint = aws.String(m.URL)
	eb, sq := eventbridge.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	ctx := context.Background()
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	bus := "orders-" + hex.EncodeToString(suffix[:])

	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(bus)})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(bus)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("all"), EventBusName: aws.String(bus),
		EventPattern: aws.String(`{"source":[{"prefix":"hookinbox."}]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("all"), EventBusName: aws.String(bus),
		Targets: []ebtypes.Target{{Id: aws.String("queue"), Arn: aws.String(attrs.Attributes["QueueArn"])}}}); err != nil {
		t.Fatal(err)
	}
	set, err := destination.New([]destination.Config{
		{Name: "bus", Bus: bus, Events: []string{"shopify:orders/*"}},
		{Name: "nowhere", Bus: "no-such-bus-" + hex.EncodeToString(suffix[:]), Events: []string{"github:*"}},
	}, destination.Options{EventBridge: eb})
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(ev webhook.Event) error {
		return set.Wrap(nil).Handle(ctx, ev, effects.NewMemoryLedger().For(ev.Key()))
	}

	ev := webhook.Event{Provider: "shopify", ID: "d-1", Type: "orders/paid", Raw: []byte(`{"id":820982911946154500, "note":"<b>Tom & Jerry</b>"}`)}
	if err := deliver(ev); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	out, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("receive from the rule's queue: %d messages, %v; want 1", len(out.Messages), err)
	}
	var got struct {
		Source     string           `json:"source"`
		DetailType string           `json:"detail-type"`
		Detail     destination.Body `json:"detail"`
	}
	if err := json.Unmarshal([]byte(aws.ToString(out.Messages[0].Body)), &got); err != nil {
		t.Fatal(err)
	}
	want := destination.Body{ID: destination.WebhookID(ev.Key(), "bus"), Provider: "shopify", Type: "orders/paid", Key: "shopify#d-1"}
	if got.Source != "hookinbox.shopify" || got.DetailType != "orders/paid" {
		t.Errorf("source %q, detail-type %q; want hookinbox.shopify, orders/paid", got.Source, got.DetailType)
	}
	// A target gets the detail as the bus encodes it (moto with spaces):
	// the same JSON document as the provider's payload, not its bytes.
	if diff := cmp.Diff(document(t, ev.Raw), document(t, got.Detail.Payload)); diff != "" {
		t.Errorf("detail's payload (-want +got):\n%s", diff)
	}
	got.Detail.Payload = nil
	if diff := cmp.Diff(want, got.Detail); diff != "" {
		t.Errorf("detail (-want +got):\n%s", diff)
	}

	big := ev
	big.ID, big.Raw = "d-big", []byte(`{"note":"`+strings.Repeat("x", destination.MaxEntrySize)+`"}`)
	if err := deliver(big); !errors.Is(err, destination.ErrTooLarge) || !webhook.IsPermanent(err) {
		t.Errorf("a %d-byte event = %v; want ErrTooLarge, permanent", len(big.Raw), err)
	}
	if out, _ := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 0}); len(out.Messages) != 0 {
		t.Errorf("the too-large event reached the bus")
	}

	err = deliver(webhook.Event{Provider: "github", ID: "g-1", Type: "push", Raw: []byte(`{}`)})
	if !errors.Is(err, destination.ErrRefused) || !webhook.IsPermanent(err) {
		t.Errorf("a bus that does not exist = %v; want ErrRefused, parked", err)
	}
}

// document decodes JSON, keeping numbers as written.
func document(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
