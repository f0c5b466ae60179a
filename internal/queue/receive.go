package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
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
	out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(q.url),
		MaxNumberOfMessages:         int32(max),
		VisibilityTimeout:           int32(visibility / time.Second),
		WaitTimeSeconds:             int32(wait / time.Second),
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		// local-aws-sqs 2.0.2 reads only the older, deprecated field; AWS
		// reads both.
		//lint:ignore SA1019 local-aws-sqs reads only this field
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll},
	})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", q.url, err)
	}
	msgs := make([]Message, 0, len(out.Messages))
	for _, m := range out.Messages {
		msg := Message{
			ID:            aws.ToString(m.MessageId),
			Body:          aws.ToString(m.Body),
			ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Attributes:    map[string]string{},
		}
		for name, v := range m.MessageAttributes {
			if !strings.HasPrefix(aws.ToString(v.DataType), "Binary") {
				msg.Attributes[name] = aws.ToString(v.StringValue)
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
	_, err := q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.url), ReceiptHandle: aws.String(receiptHandle)})
	if err != nil {
		return fmt.Errorf("delete message from %s: %w", q.url, err)
	}
	return nil
}

// Release makes a received message visible again at once, for the next
// receiver, instead of after its visibility timeout.
func (q *Queue) Release(ctx context.Context, receiptHandle string) error {
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          aws.String(q.url),
		ReceiptHandle:     aws.String(receiptHandle),
		VisibilityTimeout: 0,
	})
	if err != nil {
		return fmt.Errorf("release message on %s: %w", q.url, err)
	}
	return nil
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
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.url), AttributeNames: []types.QueueAttributeName{visible, inFlight, delayed}})
	if err != nil {
		return Depth{}, fmt.Errorf("queue depth of %s: %w", q.url, err)
	}
	n := func(name string) int { v, _ := strconv.Atoi(out.Attributes[name]); return v }
	return Depth{Visible: n(visible), InFlight: n(inFlight), Delayed: n(delayed)}, nil
}
