package floor_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/floor"
	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
)

func TestFloorClaimsOnceAndSendsOnce(t *testing.T) {
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	queueURL := st.Queues["EventsQueue"].URL
	h := floor.New(emu.LeanDynamoDB(), emu.LeanSQS(), st.Tables["InboxTable"], queueURL)
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
	got, err := emu.LeanDynamoDB().GetItem(ctx, &awsapi.GetItemInput{
		TableName: st.Tables["InboxTable"],
		Key:       awsapi.Item{"pk": awsapi.S(*out.Messages[0].Body), "sk": awsapi.S("event")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := got.Item["payload"].Binary(); string(raw) != body {
		t.Errorf("stored payload %q, want the body %q", raw, body)
	}
}

// TestFloorWritesAPendingIndexEntry: the floor's items are in the inbox
// table's pending index, as a claim is; the bare floor's are not.
func TestFloorWritesAPendingIndexEntry(t *testing.T) {
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	table, queueURL := st.Tables["InboxTable"], st.Queues["EventsQueue"].URL
	ctx := context.Background()
	indexed := floor.New(emu.LeanDynamoDB(), emu.LeanSQS(), table, queueURL)
	bare := floor.New(emu.LeanDynamoDB(), emu.LeanSQS(), table, queueURL).Bare()
	var indexedKey string
	for _, h := range []*floor.Handler{indexed, bare} {
		body := fmt.Sprintf(`{"id":"evt_%p"}`, h)
		if resp, err := h.Handle(ctx, events.APIGatewayV2HTTPRequest{Body: body}); err != nil || resp.Body != `{"status":"accepted"}` {
			t.Fatalf("%d %s, %v", resp.StatusCode, resp.Body, err)
		}
		if h == indexed {
			sum := sha256.Sum256([]byte(body))
			indexedKey = "floor#" + hex.EncodeToString(sum[:])
		}
	}
	var entries []string
	for shard := 0; shard < inbox.PendingShards; shard++ {
		out, err := emu.LeanDynamoDB().Query(ctx, &awsapi.QueryInput{
			TableName: table, IndexName: "pending",
			KeyConditionExpression:    "pending = :s",
			ExpressionAttributeValues: awsapi.Item{":s": awsapi.S(strconv.Itoa(shard))},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			pk, _ := it["pk"].String()
			entries = append(entries, pk)
		}
	}
	if len(entries) != 1 || entries[0] != indexedKey {
		t.Errorf("pending index entries %q, want exactly the floor's item %q (not the bare floor's)", entries, indexedKey)
	}
}

func TestBuildNamesItsSettings(t *testing.T) {
	if _, err := floor.Build(context.Background(), aws.Config{}, func(string) string { return "" }, nil); err == nil {
		t.Error("Build with an empty environment returned no error")
	}
	env := map[string]string{"INBOX_TABLE": "t", "EVENTS_QUEUE_URL": "http://127.0.0.1:1/q", "FLOOR_PENDING_INDEX": "yes"}
	_, err := floor.Build(context.Background(), aws.Config{}, func(k string) string { return env[k] }, nil)
	if err == nil || !strings.Contains(err.Error(), "FLOOR_PENDING_INDEX") {
		t.Errorf("Build with FLOOR_PENDING_INDEX=yes: %v, want an error naming it", err)
	}
	for _, v := range []string{"", "0", "1"} {
		env["FLOOR_PENDING_INDEX"] = v
		if _, err := floor.Build(context.Background(), aws.Config{}, func(k string) string { return env[k] }, nil); err != nil {
			t.Errorf("Build with FLOOR_PENDING_INDEX=%q: %v", v, err)
		}
	}
}
