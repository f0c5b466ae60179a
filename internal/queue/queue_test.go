package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

type fakeSQS struct {
	sqsAPI  // the receive and move calls, which these tests do not make
	sent    []*sqs.SendMessageInput
	changed []*sqs.ChangeMessageVisibilityInput
	err     error
}

// SendMessage records in, and refuses it as SQS does when its body or a
// String attribute holds a character SQS does not allow.
func (f *fakeSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	f.sent = append(f.sent, in)
	texts := map[string]string{"body": aws.ToString(in.MessageBody)}
	for name, v := range in.MessageAttributes {
		texts[name] = aws.ToString(v.StringValue)
	}
	for name, v := range texts {
		if err := sqsAllows(v); err != nil {
			return nil, fmt.Errorf("InvalidParameterValue: %s: %w", name, err)
		}
	}
	return &sqs.SendMessageOutput{}, f.err
}

// sqsAllows checks s against the characters SQS allows in a message body
// and a String attribute: #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to
// #xFFFD | #x10000 to #x10FFFF, in UTF-8.
func sqsAllows(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not UTF-8")
	}
	for _, r := range s {
		if !(r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000) {
			return fmt.Errorf("invalid character %U", r)
		}
	}
	return nil
}

func (f *fakeSQS) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	f.changed = append(f.changed, in)
	return &sqs.ChangeMessageVisibilityOutput{}, f.err
}

func TestSendCarriesTheEnvelopeOnly(t *testing.T) {
	f := &fakeSQS{}
	q := New(f, "http://q/events")
	env := Envelope{Key: "stripe#evt_1", Type: "checkout.session.completed"}
	if err := q.Send(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	in := f.sent[0]
	body := aws.ToString(in.MessageBody)
	if aws.ToString(in.QueueUrl) != "http://q/events" || body != env.Marshal() {
		t.Errorf("sent %s to %s", body, aws.ToString(in.QueueUrl))
	}
	if back, err := ParseEnvelope(body); err != nil || back != env {
		t.Errorf("body %s reads back as %+v, %v; want %+v", body, back, err, env)
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
	env := Envelope{Key: "stripe#evt_1", Type: "checkout.session.completed"}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := q.Park(context.Background(), env.Marshal(), env, strings.Repeat("x", 2000), 3, at); err != nil {
		t.Fatal(err)
	}
	attrs := f.sent[0].MessageAttributes
	value := func(name string) string { return aws.ToString(attrs[name].StringValue) }
	if got := value(AttrReason); len(got) != 1024 {
		t.Errorf("reason is %d bytes, want truncated to 1024", len(got))
	}
	if value(AttrAttempts) != "3" || value(AttrParkedAt) != "2026-11-30T12:00:00Z" {
		t.Errorf("attempts %q parked_at %q", value(AttrAttempts), value(AttrParkedAt))
	}
	if value(AttrEventType) != env.Type {
		t.Error("parked message lost its event type")
	}
}

// TestParkTakesAnyReason: a reason quotes outside text, such as a
// destination's status line with control characters, or a multi-byte
// character where it is cut: SQS takes the park all the same (else the
// event would never be parked), the reason readable, valid UTF-8 and at
// most 1 KiB.
func TestParkTakesAnyReason(t *testing.T) {
	env := Envelope{Key: "standard#msg_1", Type: "invoice.paid\x00"}
	tests := []struct {
		name, reason, want string
	}{
		{"control characters", "destination crm: 400 \x1b[2J\x1b[31mpwned\x07\x00", "destination crm: 400 \uFFFD[2J\uFFFD[31mpwned\uFFFD\uFFFD"},
		{"cut inside a character", strings.Repeat("x", 1023) + "é and more", strings.Repeat("x", 1023)},
		{"not UTF-8, and U+FFFF", "bad \xff\xfe byte \uFFFF", "bad \uFFFD byte \uFFFD"},
		{"two lines, tabs", "destination a: 400\ndestination b:\t410", "destination a: 400\ndestination b:\t410"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSQS{}
			if err := New(f, "http://q/dlq").Park(context.Background(), env.Marshal(), env, tt.reason, 5, time.Now()); err != nil {
				t.Fatalf("Park = %v; want SQS to take it", err)
			}
			if got := aws.ToString(f.sent[0].MessageAttributes[AttrReason].StringValue); got != tt.want {
				t.Errorf("reason = %q; want %q", got, tt.want)
			}
		})
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
			env := Envelope{Key: "stripe#evt_1", Type: "checkout.session.completed"}
			if err := New(f, "http://q/events").SendAfter(context.Background(), env, tt.d); err != nil {
				t.Fatal(err)
			}
			if got := f.sent[0].DelaySeconds; got != tt.want {
				t.Errorf("DelaySeconds = %d, want %d", got, tt.want)
			}
			if body := aws.ToString(f.sent[0].MessageBody); body != env.Marshal() {
				t.Errorf("body = %s, want the envelope", body)
			}
		})
	}
}
