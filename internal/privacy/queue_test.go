package privacy_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/stripe"
)

// ringQueue is an SQS queue whose released messages are at once visible
// again: it never answers a receive with nothing while it holds one.
type ringQueue struct {
	bodies            []string // visible, in order
	receives          int
	deleted, released []string
}

func (q *ringQueue) GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{
		string(sqstypes.QueueAttributeNameApproximateNumberOfMessages): strconv.Itoa(len(q.bodies))}}, nil
}

func (q *ringQueue) ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.receives++
	if len(q.bodies) == 0 {
		return &sqs.ReceiveMessageOutput{}, nil
	}
	b := q.bodies[0]
	q.bodies = q.bodies[1:]
	return &sqs.ReceiveMessageOutput{Messages: []sqstypes.Message{{Body: aws.String(b), ReceiptHandle: aws.String(b)}}}, nil
}

func (q *ringQueue) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	q.deleted = append(q.deleted, aws.ToString(in.ReceiptHandle))
	return &sqs.DeleteMessageOutput{}, nil
}

func (q *ringQueue) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	q.released = append(q.released, aws.ToString(in.ReceiptHandle))
	q.bodies = append(q.bodies, aws.ToString(in.ReceiptHandle))
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

// TestEraseSweepsAQueueOnce: the events naming the subject (by customer
// id, by email) are deleted, the other is released, and the sweep stops
// after the queue's count of messages although the released one keeps coming
// back; a dry run deletes nothing.
func TestEraseSweepsAQueueOnce(t *testing.T) {
	gone := `{"detail":{"data":{"object":{"object":"charge","customer":"cus_gone"}}}}`
	mailed := `{"detail":{"data":{"object":{"object":"charge","receipt_email":"Gone@Example.com"}}}}`
	kept := `{"detail":{"data":{"object":{"object":"customer","id":"cus_kept"}}}}`
	sub := []provider.Subject{provider.CustomerSubject(stripe.Name, "cus_gone"), provider.EmailSubject("gone@example.com")}
	for _, dryRun := range []bool{true, false} {
		q := &ringQueue{bodies: []string{kept, gone, mailed}}
		e := privacy.NewEraser(inboxtest.NewMemory(), privacy.NewHasher(privacy.Keys{"new", "old"}), nil).
			WithQueue(privacy.EventQueue{Client: q, URL: "q", Provider: stripe.Name, Finder: stripe.Provider{}})
		rep, err := e.Erase(context.Background(), privacy.Request{Subjects: sub, By: "cli:ops", DryRun: dryRun})
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			Queued, Receives  int
			Deleted, Released []string
		}
		want := result{Queued: 2, Receives: 3, Deleted: []string{gone, mailed}, Released: []string{kept}}
		if dryRun {
			want.Deleted, want.Released = nil, []string{kept, gone, mailed}
		}
		if diff := cmp.Diff(want, result{rep.Queued, q.receives, q.deleted, q.released}); diff != "" {
			t.Errorf("dry run %v (-want +got):\n%s", dryRun, diff)
		}
	}
}
