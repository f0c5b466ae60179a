package shop

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/processorfn"
)

// FromEnvIfSet is FromEnv, except that a processor with DESTINATIONS
// and no SHOP_TABLE gets no business: a stack generated from a business
// file with only Destinations runs hookinbox's processor main, which then
// delivers to the destinations only. With neither, FromEnv names the
// shop's missing settings.
func FromEnvIfSet(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
	if getenv("SHOP_TABLE") == "" && getenv("DESTINATIONS") != "" {
		return nil, nil
	}
	return FromEnv(ctx, cfg, getenv)
}
