package processorfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/processor"
)

// batchConcurrency is how many messages of a batch run at once when
// destinations are configured: the events source's BatchSize, so a
// message waiting for a slow destination never keeps another event from
// its fast ones.
const batchConcurrency = 10

// delivering returns c for a processor that delivers to dests (nil:
// none): a batch runs batchConcurrency messages at once, and each parked
// event counts its destinations' failures (destination.Set.Parked).
func delivering(c processor.Config, dests *destination.Set) processor.Config {
	if dests.Len() > 0 {
		c.Concurrency, c.Parked = batchConcurrency, dests.Parked
	}
	return c
}

// destinations builds the destinations DESTINATIONS configures (nil when
// none): each secret is loaded now, so a missing or unreadable one stops
// the cold start with the destination's name. DESTINATION_SECRETS, a
// JSON object from secret ARN to value, stands in for Secrets Manager in
// local runs, where destination.LocalHTTPEnv lets destinations be plain
// http:// on this machine; deployed, a URL that is not https:// stops it.
func destinations(ctx context.Context, cfg aws.Config, getenv func(string) string, s settings, db *dynamodb.Client, rec *metrics.Recorder, log *slog.Logger) (*destination.Set, error) {
	localHTTP := getenv(destination.LocalHTTPEnv) == "1"
	cfgs, err := destination.Parse(getenv("DESTINATIONS"), localHTTP)
	if err != nil || len(cfgs) == 0 {
		return nil, err
	}
	var local map[string]string
	if v := strings.TrimSpace(getenv("DESTINATION_SECRETS")); v != "" {
		if err := json.Unmarshal([]byte(v), &local); err != nil {
			return nil, errors.New("DESTINATION_SECRETS: want a JSON object from secret ARN to value")
		}
	}
	var sm *secretsmanager.Client
	loaded := map[string]*secrets.Rotating{}
	var errs []error
	for _, c := range cfgs {
		for _, arn := range c.SecretARNs() {
			if loaded[arn] != nil {
				continue
			}
			load := func(ctx context.Context) ([]string, error) { return secrets.Parse(local[arn]) }
			if _, ok := local[arn]; !ok {
				if sm == nil {
					sm = secretsmanager.NewFromConfig(cfg)
				}
				load = func(ctx context.Context) ([]string, error) { return secrets.List(ctx, sm, arn) }
			}
			r := &secrets.Rotating{Load: load, MaxAge: s.SecretMaxAge, MinInterval: s.SecretReload}
			if err := r.Init(ctx); err != nil {
				errs = append(errs, fmt.Errorf("destination %q: secret: %w", c.Name, err))
				continue
			}
			loaded[arn] = r
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	o := destination.Options{
		Secrets: func(ctx context.Context, arn string) ([]string, error) { return loaded[arn].Values(ctx) },
		Log:     destination.NewLog(db, s.Table, inbox.DefaultTTL),
		Metrics: rec, Logger: log, LocalHTTP: localHTTP,
	}
	for _, c := range cfgs {
		if c.IsBus() {
			o.EventBridge = eventbridge.NewFromConfig(cfg)
			break
		}
	}
	return destination.New(cfgs, o)
}
