// Package replayfn builds the dlq-replay function from its environment.
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

// Build builds the replay function, invoked by hand (the console's Test
// button, aws lambda invoke) with a replay.Request.
func Build(_ context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
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
