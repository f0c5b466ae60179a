// Package reconcilerfn runs hookinbox's scheduled reconciler Lambda with
// your own providers beside hookinbox's. Each run re-enqueues claims stuck
// in RECEIVED or FAILED, claims through the receiver's own intake what
// each provider's reconcile source (provider.Provider's Reconciler) lists
// as never delivered, each source from its own checkpoint, and removes the
// payloads of events finished longer than PAYLOAD_RETENTION ago. An event
// that arrives by both paths is one claim, so its effects run once. A
// reconciler main is one line:
//
//	func main() { reconcilerfn.Run(warehouse.Provider{}) }
//
// A source is on only when its provider's settings are set; a cold start
// names every missing or wrong setting, of every provider, in one error.
package reconcilerfn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/provider"
)

// Run is the whole main of a reconciler Lambda of hookinbox's providers
// and yours: JSON logs, the AWS config of the Lambda environment, the
// handler, lambda.Start. A function that cannot start logs why and exits
// 1.
func Run(providers ...provider.Provider) { lambdafn.Main(Builder(providers...)) }

// Builder returns what Run starts, for running the reconciler in-process
// (hookinbox dev, hookinboxtest): it builds the handler from cfg and the
// environment getenv reads.
func Builder(providers ...provider.Provider) func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	return func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
		reg, err := builtin.Registry(providers...)
		if err != nil {
			return nil, err
		}
		return build(ctx, cfg, getenv, log, reg)
	}
}

// build builds the reconciler of reg's providers: stuck claims, and what
// each provider's source configured (sources) never delivered, claimed
// through the receiver's own intake.
func build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger, reg *provider.Registry) (any, error) {
	r := envconfig.New(getenv)
	in := lambdafn.ReadInbox(r)
	stuckAfter := r.Duration("STUCK_AFTER", 15*time.Minute)
	keep := r.Duration("PAYLOAD_RETENTION", privacy.DefaultRetention)
	if keep <= 0 {
		r.Problem("want PAYLOAD_RETENTION (%v) above zero", keep)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(cfg)
	store := inbox.NewDynamoDB(db, in.Table).WithBodies(inbox.BodiesFor(cfg, in.Bucket, in.S3PathStyle))
	env := &provider.Env{Getenv: getenv, AWS: cfg, DynamoDB: db, Table: in.Table, Inbox: reconcile.ProviderInbox(store)}
	env.LoadSecret = secrets.Loader(env, 0, 0)
	srcs, err := sources(ctx, env, reg)
	if err != nil {
		return nil, err
	}
	hasher, indexes, err := privacy.FromEnv(ctx, env)
	if err != nil {
		return nil, err
	}
	events := queue.New(sqs.NewFromConfig(cfg), in.QueueURL)
	// Events from the API are re-enqueued by the duplicate path after
	// the same wait as stuck claims, and their bytes differ from the
	// webhook's.
	icfg := intake.Config{Grace: stuckAfter, FromProviderAPI: true, Metrics: rec}
	if indexes {
		icfg.Subjects = privacy.Subjects(reg, hasher)
	}
	claims := intake.New(icfg, store, events, log)
	retention := privacy.Retention{Store: store, Keep: keep}
	h := reconcile.New(
		reconcile.Config{StuckAfter: stuckAfter, Metrics: rec, Retention: retention.Run},
		store, events, claims, srcs,
		reconcile.NewCheckpoints(db, in.Table),
		log,
	)
	return h.Handle, nil
}

// sources returns the reconcile source of each provider of reg that has
// one and whose settings in env turn it on; the error names every setting
// missing or wrong, of every provider.
func sources(ctx context.Context, env *provider.Env, reg *provider.Registry) ([]reconcile.Source, error) {
	var srcs []reconcile.Source
	var errs []error
	for _, p := range reg.All() {
		src, err := p.Reconciler(ctx, env)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s source: %w", p.Name(), err))
		case src.List != nil || src.Sweep != nil:
			srcs = append(srcs, reconcile.Source{Provider: p.Name(), Source: src})
		}
	}
	return srcs, errors.Join(errs...)
}
