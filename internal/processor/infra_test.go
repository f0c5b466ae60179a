package processor_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/webhook"
)

// storeDown is what the inbox store's client returns while DynamoDB does
// not answer.
var storeDown = &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "PutItem",
	Err: &smithyhttp.RequestSendError{Err: errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout")}}

// receiveAgain delivers msg once more, as SQS does after its delay: the
// same message with one more receive, or, after it was sent again on
// its last receive, a fresh one.
func receiveAgain(f *fixture, msg *events.SQSMessage, resentBefore int) {
	receives, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	if len(f.q.resent) > resentBefore {
		receives, msg.Body = 0, f.q.bodies[len(f.q.bodies)-1]
	}
	msg.Attributes["ApproximateReceiveCount"] = strconv.Itoa(receives + 1)
}

// TestInfrastructureFailureBacksOffAndDoesNotPark: an attempt that fails
// because DynamoDB is unavailable (here the business's own write, inside
// its first effect, times out) does not use up the event's tries: twelve
// such attempts, over more than two receive limits, leave it FAILED, not
// parked, each waiting longer than the last until BackoffMax; on the last
// receive the message is sent again rather than left to SQS's redrive.
// When DynamoDB answers again the event still has all its tries for
// business failures, and then finishes with each effect run once.
func TestInfrastructureFailureBacksOffAndDoesNotPark(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_outage", "checkout.session.completed")
	f.biz.failing["evt_outage/first"] = storeDown
	var waits []time.Duration
	for attempt := 1; attempt <= 12; attempt++ {
		resent := len(f.q.resent)
		f.clock = f.clock.Add(time.Hour)
		resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
		if len(f.q.parked) != 0 {
			t.Fatalf("attempt %d: parked %v; an unavailable store must not park the event", attempt, f.q.parked)
		}
		switch {
		case len(f.q.resent) > resent:
			if len(resp.BatchItemFailures) != 0 {
				t.Fatalf("attempt %d: sent again and also reported for retry", attempt)
			}
			waits = append(waits, f.q.resent[len(f.q.resent)-1].After)
		case len(resp.BatchItemFailures) == 1:
			waits = append(waits, f.q.delays[msg.ReceiptHandle])
		default:
			t.Fatalf("attempt %d: the message was acknowledged, not put back", attempt)
		}
		receiveAgain(f, &msg, resent)
	}
	// Base 10 s, doubling, capped at 15 min; jitter 0.5 takes 3/4 of each ceiling.
	want := []time.Duration{8 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute,
		4 * time.Minute, 8 * time.Minute, 675 * time.Second, 675 * time.Second, 675 * time.Second, 675 * time.Second, 675 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	if len(f.q.resent) != 2 {
		t.Errorf("sent again %d times, want 2 (on the 5th receive of each message)", len(f.q.resent))
	}
	it := f.status(t, "evt_outage")
	if it.Status != inbox.Failed || it.Attempts != 12 || it.InfraFailures != 12 {
		t.Errorf("status %s attempts %d infra_failures %d, want FAILED 12 12", it.Status, it.Attempts, it.InfraFailures)
	}
	// DynamoDB answers again; SES throttles four times: the event is not
	// parked on a last receive, since it has had 4 tries of its own.
	f.biz.failing["evt_outage/first"] = errors.New("ses: throttled")
	for i := 0; i < 4; i++ {
		resent := len(f.q.resent)
		f.clock = f.clock.Add(time.Hour)
		_, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
		receiveAgain(f, &msg, resent)
	}
	if len(f.q.parked) != 0 {
		t.Fatalf("parked %v after 4 tries of its own; want it retried", f.q.parked)
	}
	delete(f.biz.failing, "evt_outage/first")
	f.clock = f.clock.Add(time.Hour)
	resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures %v after the outage, want none", failedIDs(resp))
	}
	if it := f.status(t, "evt_outage"); it.Status != inbox.Done {
		t.Errorf("status %s, want DONE", it.Status)
	}
	if runs := f.biz.Runs(); len(runs) != 2 {
		t.Errorf("effects run %v, want first and second once each", runs)
	}
}

// TestInfrastructureFailuresAreParkedAtTheirBound: an outage longer than
// MaxInfraFailures attempts parks the event, with the infrastructure's
// reason for the DLQ alarm and a person.
func TestInfrastructureFailuresAreParkedAtTheirBound(t *testing.T) {
	f := newFixture(t, func(c *processor.Config) { c.MaxInfraFailures = 3 })
	msg := f.claim(t, "evt_long_outage", "checkout.session.completed")
	f.biz.failing["evt_long_outage/first"] = storeDown
	for attempt := 1; attempt <= 3; attempt++ {
		f.clock = f.clock.Add(time.Hour)
		_, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
		receiveAgain(f, &msg, len(f.q.resent))
	}
	if len(f.q.parked) != 1 || !strings.Contains(f.q.parked[0].Reason, "the infrastructure failed 3 attempts") ||
		!strings.Contains(f.q.parked[0].Reason, "i/o timeout") {
		t.Fatalf("parked %+v; want one, with the infrastructure's reason", f.q.parked)
	}
	if it := f.status(t, "evt_long_outage"); it.Status != inbox.Dead || it.InfraFailures != 3 {
		t.Errorf("status %s infra_failures %d, want DEAD 3", it.Status, it.InfraFailures)
	}
}

// flakyStore is the in-memory inbox whose Lease or Finish fails as an
// unavailable DynamoDB does.
type flakyStore struct {
	*inboxtest.Memory
	leaseErr, finishErr error
}

func (s *flakyStore) Lease(ctx context.Context, key webhook.Key, owner string, now time.Time, d time.Duration) (inbox.Item, error) {
	if s.leaseErr != nil {
		return inbox.Item{}, s.leaseErr
	}
	return s.Memory.Lease(ctx, key, owner, now, d)
}

func (s *flakyStore) Finish(ctx context.Context, key webhook.Key, owner string, r inbox.Result) (inbox.Item, error) {
	if s.finishErr != nil {
		return inbox.Item{}, s.finishErr
	}
	return s.Memory.Finish(ctx, key, owner, r)
}

// TestUnavailableInboxStoreBacksOff: a lease, or an outcome, that the
// inbox store could not write puts the message back after a growing
// backoff (an outcome not before the lease ends), and on the last receive
// sends it again instead of leaving it to SQS's redrive, which would move
// it to the DLQ without a reason.
func TestUnavailableInboxStoreBacksOff(t *testing.T) {
	f := newFixture(t)
	store := &flakyStore{Memory: f.store, leaseErr: storeDown}
	h := processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }}, store, f.ledger, f.biz, f.q, f.q, nil)
	msg := f.claim(t, "evt_nolease", "checkout.session.completed")
	var waits []time.Duration
	for receive := 1; receive <= 5; receive++ {
		msg.Attributes["ApproximateReceiveCount"] = strconv.Itoa(receive)
		resp, _ := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
		if receive < 5 {
			if len(resp.BatchItemFailures) != 1 {
				t.Fatalf("receive %d: failures %v, want the message put back", receive, failedIDs(resp))
			}
			waits = append(waits, f.q.delays[msg.ReceiptHandle])
		}
	}
	want := []time.Duration{8 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	if len(f.q.resent) != 1 || f.q.resent[0].After != 2*time.Minute || len(f.q.parked) != 0 {
		t.Errorf("last receive: sent again %v, parked %v; want sent again after 2m, nothing parked", f.q.resent, f.q.parked)
	}
	if it := f.status(t, "evt_nolease"); it.Attempts != 0 {
		t.Errorf("attempts %d, want 0: no lease was taken", it.Attempts)
	}

	// The lease works, the outcome cannot be written: back when the lease
	// (45 s) ends, not sooner.
	store.leaseErr, store.finishErr = nil, storeDown
	msg.Attributes["ApproximateReceiveCount"] = "1"
	resp, _ := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 1 || f.q.delays[msg.ReceiptHandle] != 45*time.Second {
		t.Errorf("outcome not written: failures %v, delay %v; want put back for the lease's 45s", failedIDs(resp), f.q.delays[msg.ReceiptHandle])
	}
}

// TestBusyForeverIsParked: a business that answers webhook.ErrBusy
// (nothing tried) on every attempt has its attempts taken back for a
// while, its message sent again fresh on each last receive; then its
// attempts count, and it is parked out of tries with its reason, for the
// DLQ alarm and a person, instead of coming back forever.
func TestBusyForeverIsParked(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_busy", "checkout.session.completed")
	f.biz.failing["evt_busy/first"] = fmt.Errorf("crm rate limiter full, not tried: %w", webhook.ErrBusy)
	receives := 0
	for ; receives < 1000 && len(f.q.parked) == 0; receives++ {
		resent := len(f.q.resent)
		f.clock = f.clock.Add(time.Hour)
		_, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
		receiveAgain(f, &msg, resent)
	}
	if len(f.q.parked) != 1 || !strings.Contains(f.q.parked[0].Reason, "crm rate limiter full, not tried") {
		t.Fatalf("after %d receives, parked %+v; want parked once, with the business's reason", receives, f.q.parked)
	}
	if it := f.status(t, "evt_busy"); it.Status != inbox.Dead {
		t.Errorf("status %s after %d receives; want DEAD", it.Status, receives)
	}
	t.Logf("parked after %d receives: %s", receives, f.q.parked[0].Reason)
}
