package lambdalocal_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
)

func TestSQSSourcePartialBatchFailure(t *testing.T) {
	ctx := context.Background()
	client, q := eventsQueueWith(t, "m0", "m1", "m2")
	var seen []string
	var receiveCounts []string
	fn := lambdalocal.InProcess(func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			seen = append(seen, m.Body)
			receiveCounts = append(receiveCounts, m.Attributes["ApproximateReceiveCount"])
			if m.EventSourceARN != q.ARN {
				t.Errorf("eventSourceARN = %q, want %q", m.EventSourceARN, q.ARN)
			}
			if m.Body == "m1" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return resp, nil
	})
	src := &lambdalocal.SQSSource{Client: client, QueueURL: q.URL, QueueARN: q.ARN, BatchSize: 10, Function: fn}
	n, err := src.PollOnce(ctx)
	if err != nil || n != 3 {
		t.Fatalf("PollOnce = %d, %v; want 3 messages", n, err)
	}
	if diff := cmp.Diff([]string{"1", "1", "1"}, receiveCounts); diff != "" {
		t.Errorf("ApproximateReceiveCount (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"m1"}, drain(t, client, q.URL)); diff != "" {
		t.Errorf("left on the queue (-want +got):\n%s", diff)
	}
}

func TestSQSSourceFunctionErrorKeepsBatch(t *testing.T) {
	ctx := context.Background()
	client, q := eventsQueueWith(t, "a", "b")
	fn := lambdalocal.InProcess(func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
		return events.SQSEventResponse{}, errors.New("crash")
	})
	src := &lambdalocal.SQSSource{Client: client, QueueURL: q.URL, BatchSize: 10, Function: fn}
	if _, err := src.PollOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, drain(t, client, q.URL)); diff != "" {
		t.Errorf("left on the queue (-want +got):\n%s", diff)
	}
}

// eventsQueueWith returns the emulator's SQS client and the events queue
// of a fresh test stack (visibility timeout 3 s: visibleAtOnce), holding
// bodies.
func eventsQueueWith(t *testing.T, bodies ...string) (*sqs.Client, devstack.Queue) {
	t.Helper()
	client := devstacktest.ForTest(t).SQS()
	q := devstacktest.NewTestStack(t).Queues["EventsQueue"]
	visibleAtOnce(t, client, q.URL)
	for _, body := range bodies {
		if _, err := client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &q.URL, MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	return client, q
}

// visibleAtOnce makes messages the source leaves come back after 3 s (longer than the source's 1 s long poll),
// so the test can read them.
func visibleAtOnce(t *testing.T, client *sqs.Client, url string) {
	t.Helper()
	_, err := client.SetQueueAttributes(context.Background(), &sqs.SetQueueAttributesInput{
		QueueUrl: &url, Attributes: map[string]string{"VisibilityTimeout": "3"},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// drain waits out the visibility timeout, then receives every message on
// the queue and returns the bodies.
func drain(t *testing.T, client *sqs.Client, url string) []string {
	t.Helper()
	time.Sleep(3100 * time.Millisecond)
	var bodies []string
	for {
		out, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, VisibilityTimeout: 60})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			sort.Strings(bodies)
			return bodies
		}
		for _, m := range out.Messages {
			bodies = append(bodies, *m.Body)
		}
	}
}
