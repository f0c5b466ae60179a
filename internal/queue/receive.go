package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
)

// Message is one received message: its body as sent, the string values of
// its message attributes, and what SQS says about it.
type Message struct {
	ID            string
	Body          string
	ReceiptHandle string
	Attributes    map[string]string // message attributes (AttrEventType, AttrReason, ...)
	ReceiveCount  int               // ApproximateReceiveCount, this receive included
	SentAt        time.Time         // when it was sent to this queue
	Trace         string            // the AWSTraceHeader it carries: the event's X-Ray trace
}

// MaxReceive is the most messages one ReceiveMessage returns.
const MaxReceive = 10

// Receive receives up to max messages (at most MaxReceive), hiding them
// for visibility, and long-polls up to wait for the first. No messages and
// no error means the queue had none visible during wait.
func (q *Queue) Receive(ctx context.Context, max int, visibility, wait time.Duration) ([]Message, error) {
	if max <= 0 || max > MaxReceive {
		max = MaxReceive
	}
	out, err := q.client.ReceiveMessage(ctx, &awsapi.ReceiveMessageInput{
		QueueUrl:                    q.url,
		MaxNumberOfMessages:         int32(max),
		VisibilityTimeout:           int32(visibility / time.Second),
		WaitTimeSeconds:             int32(wait / time.Second),
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []string{"All"},
		// local-aws-sqs 2.0.2 reads only the older field; AWS reads both.
		AttributeNames: []string{"All"},
	})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", q.url, err)
	}
	msgs := make([]Message, 0, len(out.Messages))
	for _, m := range out.Messages {
		msg := Message{
			ID:            m.MessageId,
			Body:          m.Body,
			ReceiptHandle: m.ReceiptHandle,
			Attributes:    map[string]string{},
		}
		for name, v := range m.MessageAttributes {
			if !strings.HasPrefix(v.DataType, "Binary") {
				msg.Attributes[name] = v.StringValue
			}
		}
		msg.Trace = m.Attributes[AttrTrace]
		msg.ReceiveCount, _ = strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
		if ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64); err == nil {
			msg.SentAt = time.UnixMilli(ms).UTC()
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}

// Delete deletes a received message.
func (q *Queue) Delete(ctx context.Context, receiptHandle string) error {
	err := q.client.DeleteMessage(ctx, &awsapi.DeleteMessageInput{QueueUrl: q.url, ReceiptHandle: receiptHandle})
	if err != nil {
		return fmt.Errorf("delete message from %s: %w", q.url, err)
	}
	return nil
}

// Release makes a received message visible again at once, for the next
// receiver, instead of after its visibility timeout.
func (q *Queue) Release(ctx context.Context, receiptHandle string) error {
	err := q.client.ChangeMessageVisibility(ctx, &awsapi.ChangeMessageVisibilityInput{
		QueueUrl:          q.url,
		ReceiptHandle:     receiptHandle,
		VisibilityTimeout: 0,
	})
	if err != nil {
		return fmt.Errorf("release message on %s: %w", q.url, err)
	}
	return nil
}

// Redrive is one of SQS's message move tasks (a DLQ redrive).
type Redrive struct {
	Handle  string // the task handle, for cancelling it
	Status  string // RUNNING, COMPLETED, CANCELLING, CANCELLED or FAILED
	Moved   int64
	ToMove  int64
	Failure string // SQS's FailureReason, when FAILED
	Started time.Time
	Source  string // queue ARN
	Dest    string // queue ARN; empty means each message's source queue
}

// Finished reports whether the task has stopped moving messages.
func (r Redrive) Finished() bool {
	return r.Status == "COMPLETED" || r.Status == "CANCELLED" || r.Status == "FAILED"
}

// StartRedrive starts SQS's own DLQ redrive from the queue whose ARN is
// sourceARN (this queue's, usually) to destARN. With destARN empty SQS moves
// each message back to the queue it was dead-lettered from, which works
// only for messages SQS moved there itself (maxReceiveCount); messages the
// processor parked need destARN, the events queue. It returns the task
// handle; the move runs in the background (Redrives reports it).
func (q *Queue) StartRedrive(ctx context.Context, sourceARN, destARN string) (string, error) {
	out, err := q.client.StartMessageMoveTask(ctx, &awsapi.StartMessageMoveTaskInput{SourceArn: sourceARN, DestinationArn: destARN})
	if err != nil {
		return "", fmt.Errorf("start redrive from %s: %w", sourceARN, err)
	}
	return out.TaskHandle, nil
}

// Redrives returns the most recent message move tasks from sourceARN,
// newest first.
func (q *Queue) Redrives(ctx context.Context, sourceARN string) ([]Redrive, error) {
	out, err := q.client.ListMessageMoveTasks(ctx, &awsapi.ListMessageMoveTasksInput{SourceArn: sourceARN, MaxResults: 10})
	if err != nil {
		return nil, fmt.Errorf("list redrives from %s: %w", sourceARN, err)
	}
	var tasks []Redrive
	for _, r := range out.Results {
		var toMove int64
		if r.ApproximateNumberOfMessagesToMove != nil {
			toMove = *r.ApproximateNumberOfMessagesToMove
		}
		tasks = append(tasks, Redrive{
			Handle:  r.TaskHandle,
			Status:  r.Status,
			Moved:   r.ApproximateNumberOfMessagesMoved,
			ToMove:  toMove,
			Failure: r.FailureReason,
			Started: time.UnixMilli(r.StartedTimestamp).UTC(),
			Source:  r.SourceArn,
			Dest:    r.DestinationArn,
		})
	}
	return tasks, nil
}

// Depth is how many messages a queue holds, by SQS's approximate counts.
type Depth struct {
	Visible  int // ApproximateNumberOfMessages
	InFlight int // ApproximateNumberOfMessagesNotVisible: received, not yet deleted
	Delayed  int // ApproximateNumberOfMessagesDelayed
}

// Total is every message the queue holds.
func (d Depth) Total() int { return d.Visible + d.InFlight + d.Delayed }

// Depth reads the queue's approximate message counts: what `hookinbox
// status` shows and what the chaos runs and pipeline tests wait to drain.
func (q *Queue) Depth(ctx context.Context) (Depth, error) {
	const visible, inFlight, delayed = "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"
	out, err := q.client.GetQueueAttributes(ctx, &awsapi.GetQueueAttributesInput{QueueUrl: q.url, AttributeNames: []string{visible, inFlight, delayed}})
	if err != nil {
		return Depth{}, fmt.Errorf("queue depth of %s: %w", q.url, err)
	}
	n := func(name string) int { v, _ := strconv.Atoi(out.Attributes[name]); return v }
	return Depth{Visible: n(visible), InFlight: n(inFlight), Delayed: n(delayed)}, nil
}
