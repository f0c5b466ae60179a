// Package eventbridgefn runs hookinbox's Stripe EventBridge Lambda, the
// function a Stripe event destination on Amazon EventBridge invokes
// (template parameter StripeEventBridgeSource). It claims each Stripe
// event, snapshot or thin, as stripe#<id> through the receiver's own
// intake: an event that arrives both as a webhook and through EventBridge
// is one claim, so its effects run once. An event not from a Stripe
// partner event source, or whose detail is not a Stripe event, is logged
// and dropped; a claim that fails is retried by EventBridge, and then
// kept in the rule's dead-letter queue. Its main is one line:
//
//	func main() { eventbridgefn.Run() }
package eventbridgefn

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/eventbridge"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
)

// Run is the whole main of the Stripe EventBridge Lambda: JSON logs, the
// AWS config of the Lambda environment, the handler, lambda.Start. A
// function that cannot start logs why and exits 1.
func Run() { lambdafn.Main(Builder()) }

// Builder returns what Run starts, for running the function in-process
// (hookinbox dev, the tests): it builds the handler from cfg and the
// environment getenv reads.
func Builder() func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	return build
}

// build builds the handler on INBOX_TABLE and EVENTS_QUEUE_URL, the
// receiver's own claim and queue.
func build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
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
		reg, err := provider.NewRegistry(eventbridge.Provider())
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
	return eventbridge.New(in, rec, log).Handle, nil
}
