package inbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
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
				return inbox.NewDynamoDB(refusals{emu.LeanDynamoDB(), tc.dropItem}, st.Tables["InboxTable"])
			})
		})
	}
}

// refusals passes calls on, and drops the item from every refused
// conditional write's error when dropItem is set.
type refusals struct {
	*awsapi.DynamoDB
	dropItem bool
}

func (d refusals) refused(err error) error {
	var e *awsapi.Error
	if d.dropItem && errors.As(err, &e) && e.Item != nil {
		stripped := *e
		stripped.Item = nil
		return &stripped
	}
	return err
}

func (d refusals) PutItem(ctx context.Context, in *awsapi.PutItemInput) (*awsapi.PutItemOutput, error) {
	out, err := d.DynamoDB.PutItem(ctx, in)
	return out, d.refused(err)
}

func (d refusals) UpdateItem(ctx context.Context, in *awsapi.UpdateItemInput) (*awsapi.UpdateItemOutput, error) {
	out, err := d.DynamoDB.UpdateItem(ctx, in)
	return out, d.refused(err)
}

func (d refusals) DeleteItem(ctx context.Context, in *awsapi.DeleteItemInput) (*awsapi.DeleteItemOutput, error) {
	out, err := d.DynamoDB.DeleteItem(ctx, in)
	return out, d.refused(err)
}
