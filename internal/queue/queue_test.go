package queue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
	"github.com/hookinbox/hookinbox/webhook"
)

type fakeSQS struct {
	sqsAPI  // the receive and move calls, which these tests do not make
	sent    []*awsapi.SendMessageInput
	changed []*awsapi.ChangeMessageVisibilityInput
	err     error
}

func (f *fakeSQS) SendMessage(_ context.Context, in *awsapi.SendMessageInput) (*awsapi.SendMessageOutput, error) {
	f.sent = append(f.sent, in)
	return &awsapi.SendMessageOutput{}, f.err
}

func (f *fakeSQS) ChangeMessageVisibility(_ context.Context, in *awsapi.ChangeMessageVisibilityInput) error {
	f.changed = append(f.changed, in)
	return f.err
}

func TestSendCarriesTheEnvelopeOnly(t *testing.T) {
	f := &fakeSQS{}
	q := New(f, "http://q/events")
	env := webhook.Envelope{Key: "stripe#evt_1", Type: "checkout.session.completed"}
	if err := q.Send(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	in := f.sent[0]
	if in.QueueUrl != "http://q/events" || in.MessageBody != env.Marshal() {
		t.Errorf("sent %s to %s", in.MessageBody, in.QueueUrl)
	}
	if back, err := webhook.ParseEnvelope(in.MessageBody); err != nil || back != env {
		t.Errorf("body %s reads back as %+v, %v; want %+v", in.MessageBody, back, err, env)
	}
	if len(in.MessageAttributes) != 0 {
		t.Errorf("message attributes %v, want none: the envelope carries the type", in.MessageAttributes)
	}
	f.err = errors.New("throttled")
	if err := q.Send(context.Background(), env); err == nil || !strings.Contains(err.Error(), "stripe#evt_1") {
		t.Errorf("Send error = %v, want it to name the key", err)
	}
}

func TestParkCarriesReason(t *testing.T) {
	f := &fakeSQS{}
	q := New(f, "http://q/dlq")
	env := webhook.Envelope{Key: "stripe#evt_1", Type: "checkout.session.completed"}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := q.Park(context.Background(), env.Marshal(), env, strings.Repeat("x", 2000), 3, at); err != nil {
		t.Fatal(err)
	}
	attrs := f.sent[0].MessageAttributes
	if got := attrs[AttrReason].StringValue; len(got) != 1024 {
		t.Errorf("reason is %d bytes, want truncated to 1024", len(got))
	}
	if attrs[AttrAttempts].StringValue != "3" || attrs[AttrParkedAt].StringValue != "2026-11-30T12:00:00Z" {
		t.Errorf("attempts %q parked_at %q", attrs[AttrAttempts].StringValue, attrs[AttrParkedAt].StringValue)
	}
	if attrs[AttrEventType].StringValue != env.Type {
		t.Error("parked message lost its event type")
	}
}

func TestDelayCapsAtSQSMaximum(t *testing.T) {
	f := &fakeSQS{}
	q := New(f, "http://q/events")
	for _, d := range []time.Duration{90 * time.Second, 48 * time.Hour} {
		if err := q.Delay(context.Background(), "rh", d); err != nil {
			t.Fatal(err)
		}
	}
	if got := []int32{f.changed[0].VisibilityTimeout, f.changed[1].VisibilityTimeout}; got[0] != 90 || got[1] != 43200 {
		t.Errorf("visibility timeouts = %v, want [90 43200]", got)
	}
}

func TestSendAfterRoundsUpAndCaps(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    time.Duration
		want int32
	}{
		{"now", 0, 0},
		{"a fraction rounds up", 2500 * time.Millisecond, 3},
		{"whole seconds", 7 * time.Second, 7},
		{"capped at SQS's 15 minutes", time.Hour, 900},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSQS{}
			env := webhook.Envelope{Key: "stripe#evt_1", Type: "checkout.session.completed"}
			if err := New(f, "http://q/events").SendAfter(context.Background(), env, tt.d); err != nil {
				t.Fatal(err)
			}
			if got := f.sent[0].DelaySeconds; got != tt.want {
				t.Errorf("DelaySeconds = %d, want %d", got, tt.want)
			}
			if f.sent[0].MessageBody != env.Marshal() {
				t.Errorf("body = %s, want the envelope", f.sent[0].MessageBody)
			}
		})
	}
}
