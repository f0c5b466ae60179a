package lambdalocal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// sqsAPI lists the SQS calls an event source mapping makes.
type sqsAPI interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// SQSSource feeds one queue to one function with Lambda's semantics: a batch
// of up to BatchSize messages, gathered for at most Window; when the
// function answers, every message not named in its batchItemFailures is
// deleted; when it fails, the whole batch stays and comes back after the
// queue's visibility timeout, and the queue's redrive policy applies.
type SQSSource struct {
	Client    sqsAPI
	QueueURL  string
	QueueARN  string
	Region    string
	BatchSize int           // default 10
	Window    time.Duration // MaximumBatchingWindowInSeconds; default 0
	Function  Invoker
	Log       *slog.Logger
}

// Run polls until ctx is cancelled.
func (s *SQSSource) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if _, err := s.PollOnce(ctx); err != nil && ctx.Err() == nil {
			s.log().Warn("sqs event source: poll failed", "queue", s.QueueURL, "reason", err.Error())
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}

// PollOnce receives one batch (long-polling up to a second), invokes the
// function with it, and deletes what succeeded. It returns how many messages
// the batch held.
func (s *SQSSource) PollOnce(ctx context.Context) (int, error) {
	msgs, err := s.receive(ctx)
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	batch := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	for i, m := range msgs {
		batch.Records[i] = s.lambdaMessage(m)
	}
	payload, err := json.Marshal(batch)
	if err != nil {
		return len(msgs), err
	}
	out, err := s.Function.Invoke(ctx, payload)
	if err != nil {
		// A function error leaves the whole batch to come back.
		s.log().Warn("sqs event source: function failed; batch left on the queue", "messages", len(msgs), "reason", err.Error())
		return len(msgs), nil
	}
	keep, err := failedMessages(out, batch)
	if err != nil {
		s.log().Warn("sqs event source: unusable batch response; batch left on the queue", "reason", err.Error())
		return len(msgs), nil
	}
	return len(msgs), s.deleteExcept(ctx, msgs, keep)
}

func (s *SQSSource) receive(ctx context.Context) ([]types.Message, error) {
	size := s.BatchSize
	if size <= 0 {
		size = 10
	}
	var msgs []types.Message
	deadline := time.Now().Add(s.Window)
	for len(msgs) < size {
		n := size - len(msgs)
		if n > 10 {
			n = 10
		}
		wait := int32(1)
		if len(msgs) > 0 {
			wait = 0
		}
		out, err := s.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    &s.QueueURL,
			MaxNumberOfMessages:         int32(n),
			WaitTimeSeconds:             wait,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			// local-aws-sqs 2.0.2 reads only the older field; AWS reads both.
			AttributeNames:        []types.QueueAttributeName{types.QueueAttributeNameAll}, //lint:ignore SA1019 needed by local-aws-sqs
			MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			if len(msgs) > 0 {
				break
			}
			return nil, fmt.Errorf("receive from %s: %w", s.QueueURL, err)
		}
		msgs = append(msgs, out.Messages...)
		if len(out.Messages) == 0 || !time.Now().Before(deadline) {
			break
		}
	}
	return msgs, nil
}

// lambdaMessage turns an SQS message into the record Lambda passes.
func (s *SQSSource) lambdaMessage(m types.Message) events.SQSMessage {
	rec := events.SQSMessage{
		MessageId:         aws.ToString(m.MessageId),
		ReceiptHandle:     aws.ToString(m.ReceiptHandle),
		Body:              aws.ToString(m.Body),
		Md5OfBody:         aws.ToString(m.MD5OfBody),
		Attributes:        m.Attributes,
		MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSource:       "aws:sqs",
		EventSourceARN:    s.QueueARN,
		AWSRegion:         s.Region,
	}
	rec.Md5OfMessageAttributes = aws.ToString(m.MD5OfMessageAttributes)
	for name, v := range m.MessageAttributes {
		rec.MessageAttributes[name] = events.SQSMessageAttribute{
			DataType:    aws.ToString(v.DataType),
			StringValue: v.StringValue,
			BinaryValue: v.BinaryValue,
		}
	}
	return rec
}

// failedMessages reads a partial batch response. As in Lambda, an
// identifier that names no message of the batch fails the whole batch.
func failedMessages(out []byte, batch events.SQSEvent) (map[string]bool, error) {
	keep := map[string]bool{}
	if len(out) == 0 || string(out) == "null" {
		return keep, nil
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("batch response: %w", err)
	}
	ids := map[string]bool{}
	for _, r := range batch.Records {
		ids[r.MessageId] = true
	}
	for _, f := range resp.BatchItemFailures {
		if !ids[f.ItemIdentifier] {
			return nil, errors.New("batch response names unknown message " + strconv.Quote(f.ItemIdentifier))
		}
		keep[f.ItemIdentifier] = true
	}
	return keep, nil
}

func (s *SQSSource) deleteExcept(ctx context.Context, msgs []types.Message, keep map[string]bool) error {
	var entries []types.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if keep[aws.ToString(m.MessageId)] {
			continue
		}
		entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
	}
	for len(entries) > 0 {
		n := min(len(entries), 10)
		out, err := s.Client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &s.QueueURL, Entries: entries[:n]})
		if err != nil {
			return fmt.Errorf("delete from %s: %w", s.QueueURL, err)
		}
		if len(out.Failed) > 0 {
			s.log().Warn("sqs event source: some deletes failed; those messages will come back", "failed", len(out.Failed))
		}
		entries = entries[n:]
	}
	return nil
}

func (s *SQSSource) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
