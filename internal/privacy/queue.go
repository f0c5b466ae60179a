package privacy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// sqsAPI is what sweeping a queue calls.
type sqsAPI interface {
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// EventQueue is a queue whose messages are whole events of one provider,
// outside the inbox: the Stripe EventBridge DLQ, whose messages are
// EventBridge events with the Stripe event as their detail.
type EventQueue struct {
	Client   sqsAPI
	URL      string
	Provider string                 // the events' provider, for Finder
	Finder   provider.SubjectFinder // finds the people an event names
}

// WithQueue makes Erase also delete the messages of q whose event names
// the subject.
func (e *Eraser) WithQueue(q EventQueue) *Eraser {
	e.queues = append(e.queues, q)
	return e
}

// sweepAll sweeps every queue of e for subjects and returns how many
// messages name them.
func (e *Eraser) sweepAll(ctx context.Context, subjects []provider.Subject, dryRun bool) (int, error) {
	if len(e.queues) == 0 {
		return 0, nil
	}
	keys, err := e.hasher.values(ctx)
	if err != nil {
		return 0, err
	}
	hashes, err := e.hasher.Index(ctx, subjects)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, q := range e.queues {
		m, err := e.sweep(ctx, q, keys[0], hashes, dryRun)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// sweep deletes the messages of q whose event names one of hashes (under
// key) and makes the others visible again at once; with dryRun it
// only counts them. It stops when a receive returns nothing or once it
// has seen as many messages as the queue held when it began.
func (e *Eraser) sweep(ctx context.Context, q EventQueue, key string, hashes []string, dryRun bool) (int, error) {
	attrs, err := q.Client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.URL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", q.URL, err)
	}
	total, _ := strconv.Atoi(attrs.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	matched, seen := 0, 0
	for seen < total {
		out, err := q.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL),
			MaxNumberOfMessages: 10, VisibilityTimeout: 60, WaitTimeSeconds: 1})
		if err != nil {
			return matched, fmt.Errorf("receive from %s: %w", q.URL, err)
		}
		if len(out.Messages) == 0 {
			break
		}
		seen += len(out.Messages)
		for _, m := range out.Messages {
			if names(q, aws.ToString(m.Body), key, hashes) {
				matched++
				if !dryRun {
					if _, err := q.Client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
						return matched, fmt.Errorf("delete from %s: %w", q.URL, err)
					}
					continue
				}
			}
			if _, err := q.Client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q.URL),
				ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
				return matched, fmt.Errorf("release a message of %s: %w", q.URL, err)
			}
		}
	}
	return matched, nil
}

// names reports whether the event in body (an EventBridge event, or the
// provider's event itself) names a subject whose hash under key is in
// hashes.
func names(q EventQueue, body string, key string, hashes []string) bool {
	raw := []byte(body)
	var envelope struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &envelope) == nil && len(envelope.Detail) > 0 {
		raw = envelope.Detail
	}
	for _, s := range q.Finder.Subjects(webhook.Event{Provider: q.Provider, Raw: raw}) {
		if slices.Contains(hashes, mac(key, s)) {
			return true
		}
	}
	return false
}
