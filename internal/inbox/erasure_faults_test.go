package inbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/webhook"
)

// faultyDB passes every call on to DynamoDB; beforeWrite, when set, runs
// before each PutItem and UpdateItem and may fail it.
type faultyDB struct {
	*dynamodb.Client
	beforeWrite func(op string, key map[string]types.AttributeValue) error
}

func (d faultyDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if d.beforeWrite != nil {
		if err := d.beforeWrite("PutItem", in.Item); err != nil {
			return nil, err
		}
	}
	return d.Client.PutItem(ctx, in, opts...)
}

func (d faultyDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if d.beforeWrite != nil {
		if err := d.beforeWrite("UpdateItem", in.Key); err != nil {
			return nil, err
		}
	}
	return d.Client.UpdateItem(ctx, in, opts...)
}

// TestAnErasureCutBetweenItsWritesIsFinishedByTheNext: a finished
// event's erasure (S3 object, payload marker, effect result, status
// item) that fails at each of its writes in turn leaves the event for the
// next erasure, which removes what is left and marks it, once; an
// erasure that marks an unfinished event which finishes under it removes
// its payload instead.
func TestAnErasureCutBetweenItsWritesIsFinishedByTheNext(t *testing.T) {
	emu := devstacktest.ForTest(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for cut := range 3 { // the payload marker, the effect result, the status item
		t.Run([]string{"marker", "effect result", "status item"}[cut], func(t *testing.T) {
			st := devstacktest.NewTestStack(t)
			writes, failAt := 0, -1
			db := faultyDB{Client: emu.DynamoDB(), beforeWrite: func(string, map[string]types.AttributeValue) error {
				writes++
				if writes-1 == failAt {
					return errors.New("connection reset")
				}
				return nil
			}}
			s := inbox.NewDynamoDB(db, st.Tables["InboxTable"]).WithBodies(inbox.NewBodies(emu.S3(), st.Buckets["BodyBucket"]))
			ev := inboxtest.HugeEvent("evt_cut")
			c := inbox.Claim{Event: ev, At: now, TTL: time.Hour}.Prepared()
			it, err := s.Claim(ctx, c)
			if err == nil {
				err = s.PutPayload(ctx, c.PayloadItem(), ev.Raw)
			}
			if err == nil {
				_, err = s.Lease(ctx, it.Key, "w1", now, time.Minute)
			}
			if err == nil {
				err = effects.DoResult(ctx, ledger.New(emu.DynamoDB(), st.Tables["InboxTable"], time.Hour).For(it.Key), "mail",
					func(context.Context, string) (string, error) { return "sent to jane@example.com", nil })
			}
			if err == nil {
				_, err = s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Done, At: now})
			}
			if err != nil {
				t.Fatal(err)
			}
			writes, failAt = 0, cut
			if _, err := s.RemovePayload(ctx, it.Key, inbox.RemovedErased, now); err == nil {
				t.Fatalf("RemovePayload cut at write %d: no error", cut)
			}
			failAt = -1
			f, err := s.RemovePayload(ctx, it.Key, inbox.RemovedErased, now)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
				t.Errorf("payload after the second erasure: %v, want ErrNotFound", err)
			}
			after, err := s.Footprint(ctx, it.Key)
			if err != nil || after.Copies() != 0 || after.Item.PayloadRemoved != inbox.RemovedErased {
				t.Errorf("after the second erasure: %+v, %v; want nothing left, marked erased (it removed %v)", after, err, f.Where())
			}
		})
	}

	t.Run("finished under the mark", func(t *testing.T) {
		st := devstacktest.NewTestStack(t)
		var s *inbox.DynamoDB
		var key webhook.Key
		finished := false
		db := faultyDB{Client: emu.DynamoDB(), beforeWrite: func(op string, k map[string]types.AttributeValue) error {
			if op == "UpdateItem" && !finished && key != "" {
				// The attempt running it finishes between the erasure's
				// read and its mark.
				finished = true
				if _, err := s.Finish(ctx, key, "w1", inbox.Result{Status: inbox.Done, At: now}); err != nil {
					t.Fatal(err)
				}
			}
			return nil
		}}
		s = inbox.NewDynamoDB(db, st.Tables["InboxTable"])
		it, err := s.Claim(ctx, inbox.Claim{Event: inboxtest.Event("evt_race"), At: now, TTL: time.Hour})
		if err == nil {
			_, err = s.Lease(ctx, it.Key, "w1", now, time.Minute)
		}
		if err != nil {
			t.Fatal(err)
		}
		key = it.Key
		f, err := s.RemovePayload(ctx, it.Key, inbox.RemovedErased, now)
		if err != nil || f.Item.EraseWhenFinished || f.Copies() != 1 {
			t.Fatalf("RemovePayload as the event finished: %+v, %v; want its payload removed", f, err)
		}
		if got, _ := s.Get(ctx, it.Key); got.Status != inbox.Done || got.PayloadRemoved != inbox.RemovedErased {
			t.Errorf("after: %s, %q; want DONE, erased", got.Status, got.PayloadRemoved)
		}
	})
}
