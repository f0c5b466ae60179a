// Package queue sends and moves hookinbox envelopes on SQS.
//
// Delivery is at least once, as SQS gives it: a message may arrive twice,
// which is why the processor leases the inbox claim before doing anything.
// A Queue is safe for concurrent use.
package queue

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookinbox/hookinbox/internal/webhook"
)

// AttrEventType is the message attribute that carries the event type, so a
// filtered replay can read it without parsing the body.
const AttrEventType = "event_type"

// sqsAPI lists the SQS calls a Queue makes.
type sqsAPI interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Queue sends envelopes to one SQS queue.
type Queue struct {
	client sqsAPI
	url    string
}

// New returns a Queue for the queue at url, using a ready client.
func New(client sqsAPI, url string) *Queue { return &Queue{client: client, url: url} }

// URL returns the queue's URL.
func (q *Queue) URL() string { return q.url }

// Send sends one envelope.
func (q *Queue) Send(ctx context.Context, env webhook.Envelope) error {
	_, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:          &q.url,
		MessageBody:       aws.String(env.Marshal()),
		MessageAttributes: Attributes(env),
	})
	if err != nil {
		return fmt.Errorf("send %s: %w", env.Key, err)
	}
	return nil
}

// Attributes returns the message attributes that travel with env.
func Attributes(env webhook.Envelope) map[string]types.MessageAttributeValue {
	if env.Type == "" {
		return nil
	}
	return map[string]types.MessageAttributeValue{
		AttrEventType: {DataType: aws.String("String"), StringValue: aws.String(env.Type)},
	}
}
