package privacy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// sqsAPI is what sweeping a queue calls.
type sqsAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// EventQueue is a queue whose messages are whole events of one provider,
// outside the inbox: the Stripe EventBridge DLQ, whose messages are
// EventBridge events with the Stripe event as their detail. None of them
// has run: an erasure takes the events that name its subjects into the
// inbox (Claim), marks them to erase once finished, and only then
// deletes their messages.
type EventQueue struct {
	Client   sqsAPI
	URL      string
	Provider string            // the events' provider, for Finder
	Finder   provider.Provider // finds the people an event names (SubjectsOf)
	// Parse reads the event a message holds (provider.Fetch.QueuedEvent).
	Parse func(raw []byte) (webhook.Event, error)
	// Claim claims an event in the inbox and enqueues it, as the intake
	// does (intake.Intake.Accept). Without Parse and Claim, a message
	// that names a subject is left in the queue, and counted.
	Claim func(ctx context.Context, ev webhook.Event) error
}

// WithQueue makes Erase also take out of q the events that name the
// subject (see EventQueue).
func (e *Eraser) WithQueue(q EventQueue) *Eraser {
	e.queues = append(e.queues, q)
	return e
}

// took marks an event a sweep took into the inbox, to be erased once
// finished (nil: a dry run, which takes nothing).
type took func(ctx context.Context, key webhook.Key) error

// sweepAll sweeps every queue of e for subjects and returns how many
// messages name them.
func (e *Eraser) sweepAll(ctx context.Context, subjects []provider.Subject, mark took) (int, error) {
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
		m, err := e.sweep(ctx, q, keys[0], hashes, mark)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// sweepHide is how long a sweep keeps the messages it leaves invisible,
// so that each receive brings messages it has not seen: longer than a
// sweep of a dead-letter queue takes. They are made visible again when it
// ends.
const sweepHide = 5 * 60

// sweep takes out of q the events that name one of hashes (under key):
// each is claimed, marked (mark) and then its message deleted, so none
// is lost, nor erased before it has run; with mark nil (a dry run) it
// only counts them. It keeps every message it leaves invisible until it
// ends, then makes them visible again, so it sees each message once; it
// stops at the first receive that brings nothing new (SQS's long polling
// answers empty only when no message is visible).
func (e *Eraser) sweep(ctx context.Context, q EventQueue, key string, hashes []string, mark took) (matched int, err error) {
	var left []*string // receipt handles of the messages left, hidden
	defer func() {
		if rerr := release(ctx, q, left); err == nil {
			err = rerr
		}
	}()
	seen := map[string]bool{}
	for {
		out, err := q.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL),
			MaxNumberOfMessages: 10, VisibilityTimeout: sweepHide, WaitTimeSeconds: 1})
		if err != nil {
			return matched, fmt.Errorf("receive from %s: %w", q.URL, err)
		}
		fresh := 0
		for _, m := range out.Messages {
			id := aws.ToString(m.MessageId)
			hit := !seen[id] && names(q, aws.ToString(m.Body), key, hashes)
			if !seen[id] {
				fresh++
				seen[id] = true
			}
			if !hit || mark == nil || q.Claim == nil || q.Parse == nil {
				if hit {
					matched++
				}
				left = append(left, m.ReceiptHandle)
				continue
			}
			if err := takeIn(ctx, q, aws.ToString(m.Body), mark); err != nil {
				left = append(left, m.ReceiptHandle)
				return matched, err
			}
			matched++
			if _, err := q.Client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return matched, fmt.Errorf("delete from %s: %w", q.URL, err)
			}
		}
		if fresh == 0 {
			return matched, nil
		}
	}
}

// takeIn claims the event of a message of q in the inbox and marks it
// (mark). An event that cannot be read is not one the provider's intake
// would claim either (the EventBridge function drops it): its message
// goes.
func takeIn(ctx context.Context, q EventQueue, body string, mark took) error {
	ev, err := q.Parse(detail([]byte(body)))
	if err != nil {
		return nil
	}
	if err := q.Claim(ctx, ev); err != nil {
		return fmt.Errorf("claim %s from %s: %w", ev.Key(), q.URL, err)
	}
	return mark(ctx, ev.Key())
}

// detail returns the detail of an EventBridge event, or raw itself when
// it is not one.
func detail(raw []byte) []byte {
	var envelope struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &envelope) == nil && len(envelope.Detail) > 0 {
		return envelope.Detail
	}
	return raw
}

// release makes the messages of q whose receipt handles are left visible
// again, even when ctx is done.
func release(ctx context.Context, q EventQueue, left []*string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, h := range left {
		if _, err := q.Client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q.URL),
			ReceiptHandle: h, VisibilityTimeout: 0}); err != nil {
			return fmt.Errorf("make a message of %s visible again: %w", q.URL, err)
		}
	}
	return nil
}

// names reports whether the event in body (an EventBridge event, or the
// provider's event itself) names a subject whose hash under key is in
// hashes.
func names(q EventQueue, body string, key string, hashes []string) bool {
	raw := detail([]byte(body))
	for _, s := range SubjectsOf(q.Finder, webhook.Event{Provider: q.Provider, Raw: raw}) {
		if slices.Contains(hashes, mac(key, s)) {
			return true
		}
	}
	return false
}
