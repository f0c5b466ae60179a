package eventbridge

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// fakeIntake records what it is asked to accept.
type fakeIntake struct {
	keys []webhook.Key
	err  error
}

func (f *fakeIntake) Accept(_ context.Context, ev webhook.Event) (intake.Outcome, error) {
	if f.err != nil {
		return 0, f.err
	}
	f.keys = append(f.keys, ev.Key())
	return intake.Accepted, nil
}

func TestHandle(t *testing.T) {
	at := time.Now()
	snapshot := verifytest.StripeEvent("customer.created", "evt_1snap", at)
	rel := verifytest.StripeRelated{ID: "cus_1", Type: "customer", URL: "/v1/customers/cus_1"}
	const source = "aws.partner/stripe.com/ed_test_1"
	tests := []struct {
		name   string
		source string
		detail []byte
		want   []webhook.Key
	}{
		{"snapshot: its id, not EventBridge's", source, snapshot, []webhook.Key{"stripe#evt_1snap"}},
		{"thin: its own id", source, verifytest.StripeThin("v1.customer.created", "evt_test_65a", at, rel, ""), []webhook.Key{"stripe#evt_test_65a"}},
		{"thin in a migration: the snapshot twin's id", source, verifytest.StripeThin("v1.customer.created", "evt_test_65b", at, rel, "evt_1snap"), []webhook.Key{"stripe#evt_1snap"}},
		{"another source: dropped", "aws.partner/example.com/x", snapshot, nil},
		{"not a Stripe event: dropped", source, []byte(`{"id":"evt_1","object":"charge"}`), nil},
		{"no detail: dropped", source, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &fakeIntake{}
			err := New(in, nil, nil).Handle(context.Background(), events.EventBridgeEvent{ID: "6a7e8feb-0000", Source: tt.source, Detail: tt.detail})
			if err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if diff := cmp.Diff(tt.want, in.keys); diff != "" {
				t.Errorf("claimed (-want +got):\n%s", diff)
			}
		})
	}
	down := errors.New("dynamodb unavailable")
	err := New(&fakeIntake{err: down}, nil, nil).Handle(context.Background(), events.EventBridgeEvent{Source: source, Detail: snapshot})
	if !errors.Is(err, down) {
		t.Errorf("Handle with the intake down: %v, want the error back so EventBridge retries", err)
	}
}
