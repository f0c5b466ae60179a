package shop

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/processorfn"
)

// FromEnvIfSet is FromEnv where SHOP_TABLE is set (hookinbox's own
// template), and no business where it is not: a stack generated from a
// business file with only Destinations runs hookinbox's processor main,
// which then delivers to the destinations only.
func FromEnvIfSet(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
	if getenv("SHOP_TABLE") == "" {
		return nil, nil
	}
	return FromEnv(ctx, cfg, getenv)
}
