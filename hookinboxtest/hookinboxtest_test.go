package hookinboxtest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/hookinboxtest"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

// counter is a business with one effect, which counts its runs.
type counter struct{ runs *atomic.Int32 }

func (c counter) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return effects.DoResult(ctx, fx, "count", func(context.Context, string) (string, error) {
		c.runs.Add(1)
		return "counted " + ev.Type, nil
	})
}

func TestPipelineWithOwnBusiness(t *testing.T) {
	var runs atomic.Int32
	build := func(_ context.Context, _ aws.Config, getenv func(string) string) (processorfn.Business, error) {
		if getenv("COUNTER_NAME") != "visits" {
			t.Errorf("COUNTER_NAME = %q, want the env New was given", getenv("COUNTER_NAME"))
		}
		return counter{runs: &runs}, nil
	}
	p := hookinboxtest.New(t, build, map[string]string{"COUNTER_NAME": "visits"})
	id := hookinboxtest.NewStripeEventID()
	body := p.StripeEvent(t, "invoice.paid", id)
	if got := p.DeliverStripe(t, body); got != "accepted" {
		t.Errorf("first delivery %s, want accepted", got)
	}
	if got := p.DeliverStripe(t, body); got != "duplicate" {
		t.Errorf("second delivery %s, want duplicate", got)
	}
	key := webhook.Key("stripe#" + id)
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinished(t, []webhook.Key{key}) })
	if got := p.Status(t, key); got != "DONE" {
		t.Errorf("status %s, want DONE", got)
	}
	recs := p.Effects(t, key)
	if runs.Load() != 1 || len(recs) != 1 || recs[0].Effect != "count" || recs[0].Result != "counted invoice.paid" {
		t.Errorf("%d runs, ledger %+v; want one run recorded as count: counted invoice.paid", runs.Load(), recs)
	}
}
