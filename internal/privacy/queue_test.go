package privacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// fakeQueue is an SQS queue whose received messages stay hidden until
// made visible again (ChangeMessageVisibility 0), when they come back at
// once, at the front: a sweep that released what it leaves as it goes
// would see the same messages again and again, and miss the rest.
type fakeQueue struct {
	visible           []string // bodies, in order; a body is its own id and receipt handle
	hidden            map[string]bool
	receives          int
	deleted, released []string
}

func newFakeQueue(bodies ...string) *fakeQueue {
	return &fakeQueue{visible: bodies, hidden: map[string]bool{}}
}

func (q *fakeQueue) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.receives++
	n := min(int(in.MaxNumberOfMessages), len(q.visible))
	out := &sqs.ReceiveMessageOutput{}
	for _, b := range q.visible[:n] {
		out.Messages = append(out.Messages, sqstypes.Message{MessageId: aws.String(b), Body: aws.String(b), ReceiptHandle: aws.String(b)})
		q.hidden[b] = in.VisibilityTimeout > 0
	}
	q.visible = q.visible[n:]
	for _, m := range out.Messages {
		if !q.hidden[aws.ToString(m.Body)] {
			q.visible = append(q.visible, aws.ToString(m.Body))
		}
	}
	return out, nil
}

func (q *fakeQueue) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	q.deleted = append(q.deleted, aws.ToString(in.ReceiptHandle))
	delete(q.hidden, aws.ToString(in.ReceiptHandle))
	return &sqs.DeleteMessageOutput{}, nil
}

func (q *fakeQueue) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	h := aws.ToString(in.ReceiptHandle)
	q.released = append(q.released, h)
	if q.hidden[h] && in.VisibilityTimeout == 0 {
		delete(q.hidden, h)
		q.visible = append([]string{h}, q.visible...)
	}
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

// TestEraseSweepsEveryMessageOfAQueue: among 25 messages, the events
// naming the subject (by customer id, by email; the last one 25th) are
// claimed into the inbox, marked to erase once they have run, and only
// then deleted; the others are left, visible again once the sweep ends;
// the sweep sees each message once and stops at the first receive with
// nothing new; a dry run claims and deletes nothing and counts the same.
func TestEraseSweepsEveryMessageOfAQueue(t *testing.T) {
	gone := `{"detail":{"id":"evt_gone","data":{"object":{"object":"charge","customer":"cus_gone"}}}}`
	mailed := `{"detail":{"id":"evt_mailed","data":{"object":{"object":"charge","receipt_email":"Gone@Example.com"}}}}`
	var kept []string
	for i := range 23 {
		kept = append(kept, fmt.Sprintf(`{"detail":{"id":"evt_kept%d","data":{"object":{"object":"customer","id":"cus_kept"}}}}`, i))
	}
	sub := []provider.Subject{provider.CustomerSubject(stripe.Name, "cus_gone"), provider.EmailSubject("gone@example.com")}
	for _, dryRun := range []bool{true, false} {
		bodies := append(append([]string{gone}, kept...), mailed)
		q := newFakeQueue(bodies...)
		store := inboxtest.NewMemory()
		var claimed []webhook.Key
		claim := func(ctx context.Context, ev webhook.Event) error {
			if len(q.deleted) != len(claimed) {
				t.Errorf("%s claimed after %d deletions, %d claims: a message went before its event was in the inbox", ev.Key(), len(q.deleted), len(claimed))
			}
			claimed = append(claimed, ev.Key())
			_, err := store.Claim(ctx, inbox.Claim{Event: ev, At: time.Now(), TTL: time.Hour})
			return err
		}
		e := privacy.NewEraser(store, privacy.NewHasher(privacy.Keys{"new", "old"}), nil).
			WithQueue(privacy.EventQueue{Client: q, URL: "q", Provider: stripe.Name, Finder: stripe.Provider{}, Parse: parseDetail, Claim: claim})
		rep, err := e.Erase(context.Background(), privacy.Request{Subjects: sub, By: "cli:ops", DryRun: dryRun})
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			Queued, Receives, Waiting int
			Claimed                   []webhook.Key
			Deleted, Released         []string
		}
		want := result{Queued: 2, Receives: 4, Waiting: 2, Claimed: []webhook.Key{"stripe#evt_gone", "stripe#evt_mailed"}, Deleted: []string{gone, mailed}, Released: kept}
		if dryRun {
			want.Waiting, want.Claimed, want.Deleted, want.Released = 0, nil, nil, bodies
		}
		got := result{rep.Queued, q.receives, rep.Waiting, claimed, q.deleted, q.released}
		slices.Sort(got.Released)
		slices.Sort(want.Released)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("dry run %v (-want +got):\n%s", dryRun, diff)
		}
		if len(q.hidden) != 0 {
			t.Errorf("dry run %v: %d messages still hidden after the sweep", dryRun, len(q.hidden))
		}
		for _, k := range claimed {
			if it, err := store.Get(context.Background(), k); err != nil || !it.EraseWhenFinished {
				t.Errorf("%s taken from the queue: %+v, %v; want it marked to erase once it has run", k, it, err)
			}
		}
	}
}

// TestAnEventTheSweepCannotClaimStaysInItsQueue: a claim that fails
// fails the erasure, which is run again, and deletes nothing.
func TestAnEventTheSweepCannotClaimStaysInItsQueue(t *testing.T) {
	body := `{"detail":{"id":"evt_gone","data":{"object":{"object":"charge","customer":"cus_gone"}}}}`
	q := newFakeQueue(body)
	e := privacy.NewEraser(inboxtest.NewMemory(), privacy.NewHasher(privacy.Keys{"k"}), nil).
		WithQueue(privacy.EventQueue{Client: q, URL: "q", Provider: stripe.Name, Finder: stripe.Provider{}, Parse: parseDetail,
			Claim: func(context.Context, webhook.Event) error { return errors.New("dynamodb: throttled") }})
	if _, err := e.Erase(context.Background(), privacy.Request{Subjects: []provider.Subject{"stripe:cus_gone"}, By: "cli:ops"}); err == nil {
		t.Error("Erase with the claim failing: no error")
	}
	if len(q.deleted) != 0 || len(q.hidden) != 0 {
		t.Errorf("deleted %q, %d still hidden; want the message left, visible", q.deleted, len(q.hidden))
	}
}

// parseDetail reads the test messages' details: an id and a type.
func parseDetail(raw []byte) (webhook.Event, error) {
	var d struct{ ID string }
	if err := json.Unmarshal(raw, &d); err != nil || d.ID == "" {
		return webhook.Event{}, fmt.Errorf("not an event: %s", raw)
	}
	return webhook.Event{Provider: stripe.Name, ID: d.ID, Type: "charge.succeeded", Raw: raw}, nil
}
