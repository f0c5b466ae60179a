package pipeline_test

import (
	"errors"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/providers/paddle"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider/sample"
)

// TestSampleByName: a name is its file's in testdata/<provider>/; a
// dotted name without a file takes another of the same object when the
// provider sends it under that type, and is no sample otherwise.
func TestSampleByName(t *testing.T) {
	tests := []struct {
		s        sample.Sender
		name     string
		wantType string // "": ErrNoSample
	}{
		{stripe.Sender(), "invoice.paid", "invoice.paid"},
		{stripe.Sender(), "checkout.session.async_payment_succeeded", "checkout.session.async_payment_succeeded"},
		{stripe.Sender(), "balance.available", ""},
		{shopify.Sender(), "orders/paid", "orders/paid"},
		{paddle.Sender(), "transaction.completed", "transaction.completed"},
		{paddle.Sender(), "transaction.paid", ""}, // Paddle's type is the body's
	}
	for _, tc := range tests {
		t.Run(tc.s.Provider.Name()+" "+tc.name, func(t *testing.T) {
			ev, err := pipeline.Sample(tc.s, tc.name, sample.Event{})
			switch {
			case tc.wantType == "" && !errors.Is(err, pipeline.ErrNoSample):
				t.Errorf("Sample = %s, %v; want ErrNoSample", ev.Type, err)
			case tc.wantType != "" && (err != nil || ev.Type != tc.wantType || !ev.Fresh || ev.ID == ""):
				t.Errorf("Sample = %q %q (fresh %v), %v; want a fresh %s", ev.ID, ev.Type, ev.Fresh, err, tc.wantType)
			}
		})
	}
}
