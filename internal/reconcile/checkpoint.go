package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// dynamoDBAPI lists the DynamoDB calls the checkpoint store makes.
type dynamoDBAPI interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// CheckpointSortKey is the sort key of checkpoint items; their partition
// key is "checkpoint#<provider>". They carry no "pending" attribute and no
// expires_at, so the pending index and TTL never see them.
const CheckpointSortKey = "reconciler"

// Checkpoints keeps each provider's checkpoint in the inbox table: the
// creation time before which every listed event has been handled, in
// epoch seconds ("created_gte", the next list's created[gte]).
type Checkpoints struct {
	db    dynamoDBAPI
	table string
	now   func() time.Time
}

// NewCheckpoints returns the checkpoint store on table, using a ready client.
func NewCheckpoints(db dynamoDBAPI, table string) *Checkpoints {
	return &Checkpoints{db: db, table: table, now: time.Now}
}

func checkpointKey(provider string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "checkpoint#" + provider},
		"sk": &types.AttributeValueMemberS{Value: CheckpointSortKey},
	}
}

// Load returns the provider's checkpoint, and false when there is none yet.
func (c *Checkpoints) Load(ctx context.Context, provider string) (time.Time, bool, error) {
	out, err := c.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &c.table, Key: checkpointKey(provider), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("load %s checkpoint: %w", provider, err)
	}
	v, ok := out.Item["created_gte"].(*types.AttributeValueMemberN)
	if !ok {
		return time.Time{}, false, nil
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("load %s checkpoint: created_gte %q: %w", provider, v.Value, err)
	}
	return time.Unix(n, 0).UTC(), true, nil
}

// Save moves the provider's checkpoint to t, with one conditional write
// that never moves it back: a run that saves an older time than another
// run already did leaves the newer one.
func (c *Checkpoints) Save(ctx context.Context, provider string, t time.Time) error {
	item := checkpointKey(provider)
	item["created_gte"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(t.Unix(), 10)}
	item["checkpoint_at"] = &types.AttributeValueMemberS{Value: t.UTC().Format(time.RFC3339)}
	item["updated_at"] = &types.AttributeValueMemberS{Value: c.now().UTC().Format(time.RFC3339Nano)}
	_, err := c.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 &c.table,
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR created_gte < :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": item["created_gte"]},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // another run got further
	}
	if err != nil {
		return fmt.Errorf("save %s checkpoint: %w", provider, err)
	}
	return nil
}
