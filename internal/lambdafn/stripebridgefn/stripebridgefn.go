// Package stripebridgefn builds the function that Stripe's Amazon
// EventBridge destination invokes from its environment.
package stripebridgefn

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/stripebridge"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/stripe"
)

// Build builds the EventBridge intake: INBOX_TABLE and EVENTS_QUEUE_URL,
// the receiver's own claim and queue.
func Build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	r := envconfig.New(getenv)
	s := lambdafn.ReadInbox(r)
	if err := r.Err(); err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	// EventBridge renders an event with other bytes than the webhook did,
	// so a duplicate whose body differs is expected, as for the
	// reconciler's events from the API.
	hasher, indexes, err := privacy.FromEnv(ctx, &provider.Env{Getenv: getenv, AWS: cfg})
	if err != nil {
		return nil, err
	}
	icfg := intake.Config{FromProviderAPI: true, Metrics: rec}
	if indexes {
		reg, err := provider.NewRegistry(stripe.Provider{})
		if err != nil {
			return nil, err
		}
		icfg.Subjects = privacy.Subjects(reg, hasher)
	}
	in := intake.New(
		icfg,
		inbox.NewDynamoDB(dynamodb.NewFromConfig(cfg), s.Table),
		queue.New(sqs.NewFromConfig(cfg), s.QueueURL),
		log,
	)
	return stripebridge.New(in, rec, log).Handle, nil
}
