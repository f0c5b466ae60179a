package shop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestWelcomeEmailOnceWhenItsRecordFails is the doubled welcome email of
// the dynamodb-timeouts fault scenario, made deterministic: SES accepts
// the email and the ledger write that records it fails. The send must not
// be repeated: the record is written with retries, and an attempt that
// finds the send started but not recorded parks the event instead of
// sending again.
func TestWelcomeEmailOnceWhenItsRecordFails(t *testing.T) {
	tests := []struct {
		name   string
		fails  int
		always bool
		// wantParked: the second attempt cannot tell whether the email
		// went out and parks the event (at most once).
		wantParked bool
	}{
		{name: "record written on its third try", fails: 2},
		{name: "record never written in the attempt", always: true, wantParked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newDynamoHarness(t)
			db, inboxTable := dynamoForTest(t)
			faults := &recordFaults{testDynamoDB: db, fails: tt.fails, always: tt.always}
			effectLedger := ledger.New(faults, inboxTable, 0)
			ev := checkoutEvent("evt_1RecordFault000000001", t0)

			// The first attempt, with a processor's deadline.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err := h.shop.Handle(ctx, ev, effectLedger.For(ev.Key()))
			cancel()
			if tt.wantParked == (err == nil) {
				t.Errorf("first attempt: err = %v, want an error: %v", err, tt.wantParked)
			}
			// The retry, with the fault gone.
			faults.mu.Lock()
			faults.always = false
			faults.mu.Unlock()
			err = h.shop.Handle(context.Background(), ev, effectLedger.For(ev.Key()))
			switch {
			case tt.wantParked && (!errors.Is(err, effects.ErrOutcomeUnknown) || !webhook.IsPermanent(err)):
				t.Errorf("retry: err = %v, want a permanent ErrOutcomeUnknown (parked)", err)
			case !tt.wantParked && err != nil:
				t.Errorf("retry: %v", err)
			}
			if got := h.mails(); len(got) != 1 {
				t.Errorf("welcome emails sent = %d (%v), want 1", len(got), got)
			}
			invoices := invoicesCreated(h.invoiceCalls())
			if want := map[bool]int{true: 0, false: 1}[tt.wantParked]; len(invoices) != want {
				t.Errorf("invoices = %v, want %d", invoices, want)
			}
		})
	}
}

// TestWelcomeEmailFailures checks how each way SendEmail can fail is
// taken: SES's own answer means the email did not go out (retried); a
// timeout or a lost connection means it may have (parked, not resent).
func TestWelcomeEmailFailures(t *testing.T) {
	tests := []struct {
		name       string
		fail       error
		wantParked bool
	}{
		{name: "SES throttles", fail: &smithy.GenericAPIError{Code: "TooManyRequestsException", Fault: smithy.FaultClient}},
		{name: "SES server fault", fail: &smithy.GenericAPIError{Code: "InternalFailure", Fault: smithy.FaultServer}},
		{name: "connection lost", fail: errBoom, wantParked: true},
		{name: "timed out", fail: context.DeadlineExceeded, wantParked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHarness(t)
			mail := &fakeMailer{fail: tt.fail}
			h.shop.mail = mail
			ev := checkoutEvent("evt_1MailFail0000000000001", t0)
			err := h.shop.Handle(context.Background(), ev, h.ledger.For(ev.Key()))
			if !errors.Is(err, tt.fail) {
				t.Fatalf("err = %v, want %v in it", err, tt.fail)
			}
			if got := errors.Is(err, effects.ErrOutcomeUnknown) && webhook.IsPermanent(err); got != tt.wantParked {
				t.Fatalf("err = %v: parked (permanent ErrOutcomeUnknown) = %v, want %v", err, got, tt.wantParked)
			}
			if calls := h.invoiceCalls(); len(calls) != 0 {
				t.Errorf("invoice created before the email effect finished: %v", calls)
			}
			mail.fail = nil
			err = h.shop.Handle(context.Background(), ev, h.ledger.For(ev.Key()))
			if tt.wantParked {
				if !errors.Is(err, effects.ErrOutcomeUnknown) || len(mail.sent()) != 0 {
					t.Errorf("retry: err = %v, %d emails sent; want ErrOutcomeUnknown and none sent again", err, len(mail.sent()))
				}
				return
			}
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if st := state(t, h); len(st.Emails) != 1 || len(st.Invoices) != 1 {
				t.Errorf("after retry State = %+v, want 1 email and 1 invoice", st)
			}
		})
	}
}
