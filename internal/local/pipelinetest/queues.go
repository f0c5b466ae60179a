package pipelinetest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// Peek returns the messages on q and makes them visible again.
func Peek(t testing.TB, q *queue.Queue) []queue.Message {
	t.Helper()
	return receiveAll(t, q, q.Release)
}

// Drain deletes every message on q and returns them.
func Drain(t testing.TB, q *queue.Queue) []queue.Message {
	t.Helper()
	return receiveAll(t, q, q.Delete)
}

// receiveAll receives until q has no visible message, hiding each for a
// minute, then calls then with each receipt handle (Release or Delete).
func receiveAll(t testing.TB, q *queue.Queue, then func(ctx context.Context, receiptHandle string) error) []queue.Message {
	t.Helper()
	ctx := context.Background()
	var all []queue.Message
	for {
		msgs, err := q.Receive(ctx, queue.MaxReceive, time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		all = append(all, msgs...)
	}
	for _, m := range all {
		if err := then(ctx, m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// DLQReasons returns the events parked in the DLQ, each with the reason
// it was parked for, and leaves them there.
func (p *Pipeline) DLQReasons(t testing.TB) map[webhook.Key]string {
	t.Helper()
	got := map[webhook.Key]string{}
	for _, m := range Peek(t, p.DLQ) {
		env, err := queue.ParseEnvelope(m.Body)
		if err != nil {
			t.Fatalf("DLQ message %q: %v", m.Body, err)
		}
		got[env.Key] = m.Attributes[queue.AttrReason]
	}
	return got
}

// ReceiveBatch receives n messages from the events queue, hidden for a
// minute, as Lambda would pass them to the processor. Fewer within 10
// seconds fails the test.
func (p *Pipeline) ReceiveBatch(t testing.TB, n int) events.SQSEvent {
	t.Helper()
	var batch events.SQSEvent
	deadline := time.Now().Add(10 * time.Second)
	for len(batch.Records) < n && time.Now().Before(deadline) {
		out, err := p.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(p.Events.URL()), MaxNumberOfMessages: int32(n - len(batch.Records)), VisibilityTimeout: 60,
			AttributeNames: []sqstypes.QueueAttributeName{"All"}, //lint:ignore SA1019 local-aws-sqs reads only this field
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			batch.Records = append(batch.Records, events.SQSMessage{
				MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body: aws.ToString(m.Body), Attributes: m.Attributes,
			})
		}
	}
	if len(batch.Records) != n {
		t.Fatalf("received %d messages, want %d", len(batch.Records), n)
	}
	return batch
}
