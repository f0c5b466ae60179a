package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/webhook"
)

// reconciler returns the ReconcilerFunction as built for Lambda, logging
// to p.Logs.
func reconciler(t *testing.T, p *pipelinetest.Pipeline, overrides map[string]string) func(context.Context, events.EventBridgeEvent) (reconcile.Summary, error) {
	t.Helper()
	return p.Build(t, "ReconcilerFunction", overrides).(func(context.Context, events.EventBridgeEvent) (reconcile.Summary, error))
}

// checkout returns the key and body of a checkout.session.completed event
// for customer n, created at.
func checkout(n int, at time.Time) (webhook.Key, []byte) {
	return pipelinetest.Checkout("recon", n, at)
}

// queued returns how many messages the events queue holds per key, and
// leaves them there.
func queued(t *testing.T, p *pipelinetest.Pipeline) map[webhook.Key]int {
	t.Helper()
	got := map[webhook.Key]int{}
	for _, m := range pipelinetest.Peek(t, p.Events) {
		env, err := webhook.ParseEnvelope(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		got[env.Key]++
	}
	return got
}
