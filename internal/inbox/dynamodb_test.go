package inbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
)

// TestDynamoDBConformance runs the suite on dynalite, on the table exactly
// as template.yaml declares it (keys and the pending index): as DynamoDB
// answers a refused conditional write (with the item it lost to, when
// asked), and without the item (ReturnValuesOnConditionCheckFailure
// ignored, as by dynalite itself and older emulators), where the store
// reads the item with a GetItem and must decide as it does with the item
// in hand.
func TestDynamoDBConformance(t *testing.T) {
	emu := devstacktest.ForTest(t)
	for _, tc := range []struct {
		name     string
		dropItem bool
	}{{"item on refusal", false}, {"no item on refusal", true}} {
		t.Run(tc.name, func(t *testing.T) {
			inboxtest.Run(t, func(t *testing.T) inbox.Store {
				if strings.Contains(t.Name(), "/Concurrent") {
					devstacktest.SkipOnMoto(t, emu, devstack.MotoRacyConditions)
				}
				st := devstacktest.NewTestStack(t)
				return inbox.NewDynamoDB(refusals{emu.DynamoDB(), tc.dropItem}, st.Tables["InboxTable"]).
					WithBodies(inbox.NewBodies(emu.S3(), st.Buckets["BodyBucket"]))
			})
		})
	}
}

// refusals passes calls on, and drops the item from every refused
// conditional write's error when dropItem is set.
type refusals struct {
	*dynamodb.Client
	dropItem bool
}

func (d refusals) refused(err error) error {
	var e *types.ConditionalCheckFailedException
	if d.dropItem && errors.As(err, &e) {
		e.Item = nil
	}
	return err
}

func (d refusals) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	out, err := d.Client.PutItem(ctx, in, opts...)
	return out, d.refused(err)
}

func (d refusals) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := d.Client.UpdateItem(ctx, in, opts...)
	return out, d.refused(err)
}

func (d refusals) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	out, err := d.Client.DeleteItem(ctx, in, opts...)
	return out, d.refused(err)
}

// TestRefusedLeaseExplainedByWhatIsReadBack: a lease refused because
// another worker holds the event, read back after that worker's next
// write, says why by what it reads: the holder finished FAILED (leasable:
// a race, ErrLeaseRaced), DONE (ErrFinished), or still holds it
// (ErrLeaseHeld). It never wraps nothing.
func TestRefusedLeaseExplainedByWhatIsReadBack(t *testing.T) {
	emu := devstacktest.ForTest(t)
	ctx := context.Background()
	now := time.Now().UTC()
	for _, tc := range []struct {
		name   string
		holder inbox.Status // what the holder's Finish writes in between; "" none
		want   error
	}{
		{"holder failed its attempt", inbox.Failed, inbox.ErrLeaseRaced},
		{"holder finished", inbox.Done, inbox.ErrFinished},
		{"holder still holds it", "", inbox.ErrLeaseHeld},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := devstacktest.NewTestStack(t)
			db := &inboxtest.Racing{Client: emu.DynamoDB()}
			s := inbox.NewDynamoDB(db, st.Tables["InboxTable"])
			it, err := s.Claim(ctx, inbox.Claim{Event: inboxtest.Event("evt_raced"), At: now, TTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Lease(ctx, it.Key, "w1", now, time.Minute); err != nil {
				t.Fatal(err)
			}
			if tc.holder != "" {
				db.Between(func() {
					if _, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: tc.holder, Error: "ses: throttled", At: now.Add(time.Second)}); err != nil {
						t.Errorf("the holder's Finish: %v", err)
					}
				})
			}
			_, err = s.Lease(ctx, it.Key, "w2", now.Add(time.Second), time.Minute)
			if !errors.Is(err, tc.want) || strings.Contains(err.Error(), "%!") {
				t.Errorf("Lease = %v; want %v", err, tc.want)
			}
		})
	}
}
