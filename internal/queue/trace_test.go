package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/queue"
)

const (
	invocationTrace = "Root=1-6751f0a1-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1"
	eventTrace      = "Root=1-6751f0a2-fedcba9876543210fedcba98;Parent=1a2b3c4d5e6f7a8b;Sampled=1"
)

// lambdaContext is a handler's context as aws-lambda-go builds it, with
// the invocation's trace header under its own key.
func lambdaContext() context.Context {
	//lint:ignore SA1029 the string key is aws-lambda-go's, which Trace reads
	return context.WithValue(context.Background(), "x-amzn-trace-id", invocationTrace)
}

func TestTrace(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"none", context.Background(), ""},
		{"the invocation's", lambdaContext(), invocationTrace},
		{"the message's wins", queue.WithTrace(lambdaContext(), eventTrace), eventTrace},
		{"empty changes nothing", queue.WithTrace(lambdaContext(), ""), invocationTrace},
		{"not an X-Ray header", queue.WithTrace(context.Background(), "garbage"), ""},
	}
	for _, tt := range tests {
		if got := queue.Trace(tt.ctx); got != tt.want {
			t.Errorf("%s: Trace = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got, want := queue.TraceRoot(eventTrace), "1-6751f0a2-fedcba9876543210fedcba98"; got != want {
		t.Errorf("TraceRoot = %q, want %q", got, want)
	}
}

func TestSendAndParkCarryTheTrace(t *testing.T) {
	events, dlq, _ := queues(t)
	env := queue.Envelope{Key: "stripe#evt_traced", Type: "invoice.paid"}
	if err := events.Send(lambdaContext(), env); err != nil {
		t.Fatal(err)
	}
	if err := events.Send(context.Background(), queue.Envelope{Key: "stripe#evt_untraced"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range receiveAll(t, events) {
		got[m.Body] = m.Trace
	}
	if got[env.Marshal()] != invocationTrace || got[queue.Envelope{Key: "stripe#evt_untraced"}.Marshal()] != "" {
		t.Errorf("traces by body %v", got)
	}
	if err := dlq.Park(queue.WithTrace(context.Background(), eventTrace), env.Marshal(), env, "no such price", 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	if msgs := receiveAll(t, dlq); len(msgs) != 1 || msgs[0].Trace != eventTrace {
		t.Errorf("parked %+v, want the event's trace", msgs)
	}
}
