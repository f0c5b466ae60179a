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
// as template.yaml declares it (keys and the pending index).
func TestDynamoDBConformance(t *testing.T) {
	emu := devstacktest.ForTest(t)
	inboxtest.Run(t, func(t *testing.T) inbox.Store {
		if strings.Contains(t.Name(), "/Concurrent") {
			devstacktest.SkipOnMoto(t, emu, devstack.MotoRacyConditions)
		}
		st := devstacktest.NewTestStack(t)
		return inbox.NewDynamoDB(emu.LeanDynamoDB(), st.Tables["InboxTable"])
	})
}

// TestDynamoDBConformanceWithoutItemOnConditionFailure runs the suite on a
// DynamoDB that answers a refused conditional write without the item
// (ReturnValuesOnConditionCheckFailure ignored, as by dynalite itself and
// older emulators): the store then reads the item with a GetItem, and
// must decide as it does with the item in hand.
func TestDynamoDBConformanceWithoutItemOnConditionFailure(t *testing.T) {
	emu := devstacktest.ForTest(t)
	inboxtest.Run(t, func(t *testing.T) inbox.Store {
		if strings.Contains(t.Name(), "/Concurrent") {
			devstacktest.SkipOnMoto(t, emu, devstack.MotoRacyConditions)
		}
		st := devstacktest.NewTestStack(t)
		return inbox.NewDynamoDB(noItemOnConditionFailure{emu.LeanDynamoDB()}, st.Tables["InboxTable"])
	})
}

// noItemOnConditionFailure drops the item from every refused conditional
// write's error.
type noItemOnConditionFailure struct{ *awsapi.DynamoDB }

func dropItem(err error) error {
	var e *awsapi.Error
	if errors.As(err, &e) && e.Item != nil {
		stripped := *e
		stripped.Item = nil
		return &stripped
	}
	return err
}

func (d noItemOnConditionFailure) PutItem(ctx context.Context, in *awsapi.PutItemInput) (*awsapi.PutItemOutput, error) {
	out, err := d.DynamoDB.PutItem(ctx, in)
	return out, dropItem(err)
}

func (d noItemOnConditionFailure) UpdateItem(ctx context.Context, in *awsapi.UpdateItemInput) (*awsapi.UpdateItemOutput, error) {
	out, err := d.DynamoDB.UpdateItem(ctx, in)
	return out, dropItem(err)
}

func (d noItemOnConditionFailure) DeleteItem(ctx context.Context, in *awsapi.DeleteItemInput) (*awsapi.DeleteItemOutput, error) {
	out, err := d.DynamoDB.DeleteItem(ctx, in)
	return out, dropItem(err)
}
