// Command processor is the SQS-triggered Lambda that runs each event's
// business effects once, with the example shop as its business, and
// delivers to the destinations DESTINATIONS configures. Your own
// processor main is the same line with your BusinessBuilder
// (examples/custom-business).
package main

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/processorfn"
)

func main() { processorfn.Run(shopIfSet) }

// shopIfSet builds the example shop where its table is set (hookinbox's
// template). A stack generated from a business file has none: its
// processor delivers to its destinations only.
func shopIfSet(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
	if getenv("SHOP_TABLE") == "" {
		return nil, nil
	}
	return shop.FromEnv(ctx, cfg, getenv)
}
