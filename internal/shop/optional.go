package shop

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/processorfn"
)

// FromEnvIfSet is the example shop's processorfn.BusinessBuilder, which
// functions/processor runs. A processor with DESTINATIONS and no
// SHOP_TABLE gets no business, so a stack whose business file lists only
// destinations delivers to them. Otherwise it builds the shop, naming
// every missing setting.
func FromEnvIfSet(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
	if getenv("SHOP_TABLE") == "" && getenv("DESTINATIONS") != "" {
		return nil, nil
	}
	return fromEnv(ctx, cfg, getenv)
}
