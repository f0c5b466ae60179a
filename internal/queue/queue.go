// Package queue sends, receives and moves hookinbox envelopes on SQS.
//
// Delivery is at least once, as SQS gives it: a message may arrive twice,
// which is why the processor leases the inbox claim before doing anything.
// Receive, Delete and Release serve the DLQ replay. A Queue is safe for
// concurrent use.
package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// AttrEventType is the message attribute that carries the event type on a
// parked message (Park), so the DLQ shows it beside the reason. A message
// on the events queue carries its type in its envelope only: every reader
// parses the envelope anyway, and an attribute would cost every new event
// its encoding, SQS's checksum of it and a longer answer.
const AttrEventType = "event_type"

// sqsAPI lists the SQS calls a Queue makes (*sqs.Client).
type sqsAPI interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// Queue sends envelopes to one SQS queue.
type Queue struct {
	client sqsAPI
	url    string
}

// New returns a Queue for the queue at url, using a ready client
// (sqs.NewFromConfig).
func New(client sqsAPI, url string) *Queue { return &Queue{client: client, url: url} }

// URL returns the queue's URL.
func (q *Queue) URL() string { return q.url }

// Send sends one envelope.
func (q *Queue) Send(ctx context.Context, env Envelope) error {
	return q.SendAfter(ctx, env, 0)
}

// maxDelay is SQS's longest message delay (DelaySeconds).
const maxDelay = 15 * time.Minute

// SendAfter sends one envelope that SQS delivers after d, rounded up to
// whole seconds and at most maxDelay. The processor uses it to send a
// message again, with a fresh receive count, instead of returning it on its
// last receive.
func (q *Queue) SendAfter(ctx context.Context, env Envelope, d time.Duration) error {
	if d > maxDelay {
		d = maxDelay
	}
	secs := int32((d + time.Second - 1) / time.Second)
	_, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:                aws.String(q.url),
		MessageBody:             aws.String(env.Marshal()),
		MessageSystemAttributes: traceAttributes(ctx),
		DelaySeconds:            max(secs, 0),
	})
	if err != nil {
		return fmt.Errorf("send %s: %w", env.Key, err)
	}
	return nil
}

// attributes returns the message attributes that travel with env.
func attributes(env Envelope) map[string]types.MessageAttributeValue {
	if env.Type == "" {
		return nil
	}
	return map[string]types.MessageAttributeValue{AttrEventType: stringAttr(env.Type)}
}

func stringAttr(v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(sqsText(v))}
}

// sqsText returns s with every character SQS refuses in a message or a
// String attribute (the control characters but tab, line feed and
// carriage return; U+FFFE, U+FFFF; invalid UTF-8) replaced by U+FFFD.
// A reason quotes outside text (a destination's status line): one such
// character would make SQS refuse the park, and the event never park.
func sqsText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 {
			return r
		}
		return utf8.RuneError
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// maxReason is the most of a reason a parked message carries, in bytes.
const maxReason = 1024

// cut returns s cut to at most n bytes on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Attributes a parked message carries, so an operator sees why it is in the
// DLQ without looking anything up.
const (
	AttrReason   = "error_reason"
	AttrAttempts = "attempts"
	AttrParkedAt = "parked_at"
)

// Park sends a message body to this queue (the DLQ) with the reason it was
// parked: env.Marshal() for an event, or the original body of a message that
// could not be read. reason must not hold payload data; it is cut to
// maxReason bytes on a character boundary, and what SQS refuses in it is
// replaced (sqsText).
func (q *Queue) Park(ctx context.Context, body string, env Envelope, reason string, attempts int, at time.Time) error {
	reason = cut(sqsText(reason), maxReason)
	attrs := attributes(env)
	if attrs == nil {
		attrs = map[string]types.MessageAttributeValue{}
	}
	attrs[AttrReason] = stringAttr(reason)
	attrs[AttrAttempts] = types.MessageAttributeValue{DataType: aws.String("Number"), StringValue: aws.String(strconv.Itoa(attempts))}
	attrs[AttrParkedAt] = stringAttr(at.UTC().Format(time.RFC3339))
	_, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:                aws.String(q.url),
		MessageBody:             aws.String(body),
		MessageAttributes:       attrs,
		MessageSystemAttributes: traceAttributes(ctx),
	})
	if err != nil {
		return fmt.Errorf("park %s: %w", env.Key, err)
	}
	return nil
}

// maxVisibility is SQS's longest visibility timeout.
const maxVisibility = 12 * time.Hour

// Delay hides the received message for d before SQS delivers it again: the
// backoff of a transient failure.
func (q *Queue) Delay(ctx context.Context, receiptHandle string, d time.Duration) error {
	if d > maxVisibility {
		d = maxVisibility
	}
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          aws.String(q.url),
		ReceiptHandle:     aws.String(receiptHandle),
		VisibilityTimeout: int32(d / time.Second),
	})
	if err != nil {
		return fmt.Errorf("delay message: %w", err)
	}
	return nil
}
