package floor_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/floor"
)

func TestFloorClaimsOnceAndSendsOnce(t *testing.T) {
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	queueURL := st.Queues["EventsQueue"].URL
	h := floor.New(emu.DynamoDB(), emu.SQS(), st.Tables["InboxTable"], queueURL)
	ctx := context.Background()
	const body = `{"id":"evt_floor"}`
	for i, want := range []string{`{"status":"accepted"}`, `{"status":"duplicate"}`} {
		resp, err := h.Handle(ctx, events.APIGatewayV2HTTPRequest{Body: body})
		if err != nil || resp.StatusCode != 200 || resp.Body != want {
			t.Fatalf("delivery %d: %d %s, %v; want 200 %s", i+1, resp.StatusCode, resp.Body, err, want)
		}
	}
	out, err := emu.SQS().ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 {
		t.Fatalf("%d messages sent, want 1", len(out.Messages))
	}
	// The message names the item, and the item holds the body as received.
	got, err := emu.DynamoDB().GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(st.Tables["InboxTable"]),
		Key:       map[string]types.AttributeValue{"pk": s(*out.Messages[0].Body), "sk": s("event")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := got.Item["payload"].(*types.AttributeValueMemberB); raw == nil || string(raw.Value) != body {
		t.Errorf("stored payload %v, want the body %q", got.Item["payload"], body)
	}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// TestFloorWritesAPendingIndexEntry: the floor's items are in the inbox
// table's pending index, as a claim is.
func TestFloorWritesAPendingIndexEntry(t *testing.T) {
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	table, queueURL := st.Tables["InboxTable"], st.Queues["EventsQueue"].URL
	ctx := context.Background()
	h := floor.New(emu.DynamoDB(), emu.SQS(), table, queueURL)
	const body = `{"id":"evt_indexed"}`
	if resp, err := h.Handle(ctx, events.APIGatewayV2HTTPRequest{Body: body}); err != nil || resp.Body != `{"status":"accepted"}` {
		t.Fatalf("%d %s, %v", resp.StatusCode, resp.Body, err)
	}
	sum := sha256.Sum256([]byte(body))
	want := "floor#" + hex.EncodeToString(sum[:])
	var entries []string
	for shard := 0; shard < inbox.PendingShards; shard++ {
		out, err := emu.DynamoDB().Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(table), IndexName: aws.String("pending"),
			KeyConditionExpression:    aws.String("pending = :s"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": s(strconv.Itoa(shard))},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			if pk, ok := it["pk"].(*types.AttributeValueMemberS); ok {
				entries = append(entries, pk.Value)
			}
		}
	}
	if len(entries) != 1 || entries[0] != want {
		t.Errorf("pending index entries %q, want exactly the floor's item %q", entries, want)
	}
}

func TestBuildNamesItsSettings(t *testing.T) {
	if _, err := floor.Build(context.Background(), aws.Config{}, func(string) string { return "" }, nil); err == nil {
		t.Error("Build with an empty environment returned no error")
	}
	env := map[string]string{"INBOX_TABLE": "t", "EVENTS_QUEUE_URL": "http://127.0.0.1:1/q"}
	if _, err := floor.Build(context.Background(), aws.Config{}, func(k string) string { return env[k] }, nil); err != nil {
		t.Errorf("Build with both settings: %v", err)
	}
}
