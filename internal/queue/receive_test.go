package queue_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// queues returns the events queue and the DLQ of a new stack made from
// template.yaml on local-aws-sqs.
func queues(t *testing.T) (events, dlq *queue.Queue, st *devstack.Stack) {
	t.Helper()
	emu := devstacktest.ForTest(t)
	st = devstacktest.NewTestStack(t)
	c := emu.SQS()
	return queue.New(c, st.Queues["EventsQueue"].URL), queue.New(c, st.Queues["EventsDLQ"].URL), st
}

// receiveAll receives until the queue gives nothing, hiding each message for a minute.
func receiveAll(t *testing.T, q *queue.Queue) []queue.Message {
	t.Helper()
	var all []queue.Message
	for {
		msgs, err := q.Receive(context.Background(), queue.MaxReceive, time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return all
		}
		all = append(all, msgs...)
	}
}

func TestParkedMessageCarriesItsReason(t *testing.T) {
	ctx := context.Background()
	_, dlq, _ := queues(t)
	env := queue.Envelope{Key: "stripe#evt_park", Type: "checkout.session.completed"}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := dlq.Park(ctx, env.Marshal(), env, "create invoice: no such customer", 3, at); err != nil {
		t.Fatal(err)
	}
	msgs := receiveAll(t, dlq)
	if len(msgs) != 1 {
		t.Fatalf("received %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	want := map[string]string{
		queue.AttrEventType: "checkout.session.completed",
		queue.AttrReason:    "create invoice: no such customer",
		queue.AttrAttempts:  "3",
		queue.AttrParkedAt:  "2026-11-30T12:00:00Z",
	}
	if diff := cmp.Diff(want, m.Attributes); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
	if m.Body != env.Marshal() || m.ReceiveCount != 1 || m.ID == "" || m.SentAt.IsZero() {
		t.Errorf("message %+v", m)
	}
}

func TestReleaseThenDelete(t *testing.T) {
	ctx := context.Background()
	events, _, _ := queues(t)
	if err := events.Send(ctx, queue.Envelope{Key: "stripe#evt_rel"}); err != nil {
		t.Fatal(err)
	}
	first := receiveAll(t, events)
	if len(first) != 1 {
		t.Fatalf("received %d, want 1", len(first))
	}
	if len(first[0].Attributes) != 0 {
		t.Errorf("an envelope without a type has attributes %v", first[0].Attributes)
	}
	if err := events.Release(ctx, first[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	again := receiveAll(t, events)
	if len(again) != 1 || again[0].ID != first[0].ID || again[0].ReceiveCount < 2 {
		t.Fatalf("after Release: %+v, want the same message, received again", again)
	}
	if err := events.Delete(ctx, again[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if err := events.Release(ctx, again[0].ReceiptHandle); err == nil {
		t.Error("Release of a deleted message: no error")
	}
}

// TestStartRedriveMovesToTheEventsQueue checks that a parked message
// survives SQS's own DLQ redrive (the console's "Start DLQ redrive") to
// the events queue with its body and type.
func TestStartRedriveMovesToTheEventsQueue(t *testing.T) {
	ctx := context.Background()
	emu := devstacktest.ForTest(t)
	devstacktest.SkipOnMoto(t, emu, devstack.MotoNoMessageMove)
	events, dlq, st := queues(t)
	env := queue.Envelope{Key: "stripe#evt_redrive", Type: "customer.subscription.updated"}
	if err := dlq.Park(ctx, env.Marshal(), env, "mapping gap", 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	source, dest := st.Queues["EventsDLQ"].ARN, st.Queues["EventsQueue"].ARN
	task, err := emu.SQS().StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(source), DestinationArn: aws.String(dest)})
	if err != nil || aws.ToString(task.TaskHandle) == "" {
		t.Fatalf("StartMessageMoveTask: %+v, %v", task, err)
	}
	var moved []queue.Message
	for deadline := time.Now().Add(10 * time.Second); len(moved) == 0 && time.Now().Before(deadline); {
		msgs, err := events.Receive(ctx, queue.MaxReceive, time.Minute, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		moved = append(moved, msgs...)
	}
	if len(moved) != 1 || moved[0].Body != env.Marshal() || moved[0].Attributes[queue.AttrEventType] != env.Type {
		t.Fatalf("events queue after the redrive: %+v", moved)
	}
}

// TestDepthCountsVisibleInFlightAndDelayed checks what every emulator
// reports alike (local-aws-sqs counts a received or delayed message as
// visible too, which SQS does not): an empty queue, a message in flight,
// a delayed one, and the queue drained.
func TestDepthCountsVisibleInFlightAndDelayed(t *testing.T) {
	events, _, _ := queues(t)
	ctx := context.Background()
	depth := func() queue.Depth {
		t.Helper()
		d, err := events.Depth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := depth(); d.Total() != 0 {
		t.Fatalf("new queue: %+v, want empty", d)
	}
	for i, after := range []time.Duration{0, time.Minute} {
		if err := events.SendAfter(ctx, queue.Envelope{Key: webhook.NewKey("stripe", "evt_depth"+strconv.Itoa(i)), Type: "invoice.paid"}, after); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := events.Receive(ctx, 1, time.Minute, 0)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Receive = %d messages, %v; want 1", len(msgs), err)
	}
	if d := depth(); d.InFlight != 1 || d.Delayed != 1 || d.Total() < 2 {
		t.Errorf("one received, one delayed: %+v", d)
	}
	if err := events.Delete(ctx, msgs[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if d := depth(); d.InFlight != 0 || d.Delayed != 1 {
		t.Errorf("after the delete: %+v, want nothing in flight, 1 delayed", d)
	}
}
