// Package replayfn runs hookinbox's dlq-replay Lambda: it sends parked
// events back to the processor, the whole dead-letter queue, a filtered
// part of it, or events by key, with a dry run that changes nothing. A
// message leaves the DLQ only once its copy is on the events queue, and an
// event sent back twice still runs its effects once (the processor's
// lease and effect ledger). Invoke it from the Lambda console's Test tab,
// `aws lambda invoke` or `hookinbox replay` (docs/operations.md). A replay
// main is one line:
//
//	func main() { replayfn.Run() }
package replayfn

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
)

// Run is the whole main of the replay Lambda: JSON logs, the AWS config of
// the Lambda environment, the handler, lambda.Start. A function that
// cannot start logs why and exits 1.
func Run() { lambdafn.Main(Builder()) }

// Builder returns what Run starts, for running the replay function
// in-process (hookinbox dev, the tests): it builds the handler from cfg
// and the environment getenv reads.
func Builder() func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	return build
}

func build(_ context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	s, err := loadSettings(getenv)
	if err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	sq := sqs.NewFromConfig(cfg)
	h := replay.New(
		replay.Config{DefaultMax: s.DefaultMax, Metrics: rec},
		inbox.NewDynamoDB(dynamodb.NewFromConfig(cfg), s.Table).WithBodies(inbox.BodiesFor(cfg, s.Bucket, s.S3PathStyle)),
		queue.New(sq, s.QueueURL),
		queue.New(sq, s.DLQURL),
		log,
	)
	return h.Handle, nil
}
