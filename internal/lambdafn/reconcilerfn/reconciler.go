// Package reconcilerfn builds the scheduled reconciler function from its
// environment.
package reconcilerfn

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
)

// Build builds the scheduled reconciler: stuck claims, and what each
// configured source (buildSources) never delivered, claimed through the
// receiver's own intake.
func Build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	s, err := LoadSettings(getenv)
	if err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(cfg)
	store := inbox.NewDynamoDB(db, s.Table).WithBodies(inbox.BodiesFor(cfg, s.Bucket, s.S3PathStyle))
	sources, err := buildSources(ctx, cfg, s, store, db)
	if err != nil {
		return nil, err
	}
	events := queue.New(sqs.NewFromConfig(cfg), s.QueueURL)
	// Events from the API are re-enqueued by the duplicate path after the
	// same wait as stuck claims, and their bytes differ from the webhook's.
	in := intake.New(intake.Config{Grace: s.StuckAfter, FromProviderAPI: true, Metrics: rec}, store, events, log)
	h := reconcile.New(
		reconcile.Config{StuckAfter: s.StuckAfter, Lookback: s.Lookback, Metrics: rec,
			Lookbacks: map[string]time.Duration{"github": s.GitHubLookback, "shopify": s.ShopifyLookback}},
		store, events, in, sources,
		reconcile.NewCheckpoints(db, s.Table),
		log,
	)
	return h.Handle, nil
}
