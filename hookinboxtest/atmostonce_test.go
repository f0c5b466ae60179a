package hookinboxtest_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/hookinboxtest"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

// emailer sends one email per event through an at-most-once effect: an
// outside call that takes no idempotency key.
type emailer struct{ sent *atomic.Int32 }

func (e emailer) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return effects.AtMostOnce(ctx, fx, "email", func(context.Context, string) (string, error) {
		e.sent.Add(1)
		return "sent", nil
	})
}

// TestCheckOnceAcceptsAtMostOnceEffects: an effect run with
// effects.AtMostOnce happens once whatever CheckOnce fails or loses, and
// the event ends DONE: the check reports nothing.
func TestCheckOnceAcceptsAtMostOnceEffects(t *testing.T) {
	var sent atomic.Int32
	p := hookinboxtest.New(t, hookinboxtest.Options{Business: func(context.Context, aws.Config, func(string) string) (processorfn.Business, error) {
		return emailer{sent: &sent}, nil
	}})
	p.CheckOnce(t, func(tb testing.TB) hookinboxtest.Event { return p.Sample(tb, "github", "issues") }, func() int { return int(sent.Load()) })
}
