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

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// dynamoDBAPI lists the DynamoDB calls the checkpoint store makes.
type dynamoDBAPI interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// checkpointSortKey is the sort key of checkpoint items; their partition
// key is "checkpoint#<provider>". They carry no "pending" attribute and no
// expires_at, so the pending index and TTL never see them.
const checkpointSortKey = "reconciler"

// Checkpoint is where the reconciler stands in one provider's event list.
type Checkpoint struct {
	// At: every event created before it has been handled.
	At time.Time
	// Blocked is the event, created at At, that the last run could not
	// accept, and Tries how many runs failed on it while later events
	// went through. After maxTries such runs it is skipped.
	Blocked webhook.Key
	Tries   int
}

// Checkpoints keeps each provider's checkpoint in the inbox table: the
// creation time before which every listed event has been handled, in
// epoch seconds ("created_gte", the next list's created[gte]), with the
// event that blocks it; and one item per event skipped
// (sk "skipped#<key>"), which an operator can list.
type Checkpoints struct {
	db    dynamoDBAPI
	table string
	now   func() time.Time
}

// NewCheckpoints returns the checkpoint store on table, using a ready client.
func NewCheckpoints(db dynamoDBAPI, table string) *Checkpoints {
	return &Checkpoints{db: db, table: table, now: time.Now}
}

// CheckpointPartition returns the partition key of a provider's
// checkpoint and skipped-event items.
func CheckpointPartition(provider string) string { return "checkpoint#" + provider }

// SkippedPrefix starts the sort key of a skipped-event item; the rest is
// the event key.
const SkippedPrefix = "skipped#"

func checkpointKey(provider, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: CheckpointPartition(provider)},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

// Load returns the provider's checkpoint, and false when there is none yet.
func (c *Checkpoints) Load(ctx context.Context, provider string) (Checkpoint, bool, error) {
	out, err := c.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &c.table, Key: checkpointKey(provider, checkpointSortKey), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("load %s checkpoint: %w", provider, err)
	}
	v, ok := out.Item["created_gte"].(*types.AttributeValueMemberN)
	if !ok {
		return Checkpoint{}, false, nil
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("load %s checkpoint: created_gte %q: %w", provider, v.Value, err)
	}
	cp := Checkpoint{At: time.Unix(n, 0).UTC()}
	if b, ok := out.Item["blocked"].(*types.AttributeValueMemberS); ok {
		cp.Blocked = webhook.Key(b.Value)
	}
	if t, ok := out.Item["tries"].(*types.AttributeValueMemberN); ok {
		cp.Tries, _ = strconv.Atoi(t.Value)
	}
	return cp, true, nil
}

// Save writes the provider's checkpoint, with one conditional write that
// never moves it back: a run that saves an older time than another run
// already did leaves the newer one.
func (c *Checkpoints) Save(ctx context.Context, provider string, cp Checkpoint) error {
	item := checkpointKey(provider, checkpointSortKey)
	item["created_gte"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(cp.At.Unix(), 10)}
	item["checkpoint_at"] = &types.AttributeValueMemberS{Value: cp.At.UTC().Format(time.RFC3339)}
	item["updated_at"] = &types.AttributeValueMemberS{Value: c.now().UTC().Format(time.RFC3339Nano)}
	if cp.Blocked != "" {
		item["blocked"] = &types.AttributeValueMemberS{Value: string(cp.Blocked)}
		item["tries"] = &types.AttributeValueMemberN{Value: strconv.Itoa(cp.Tries)}
	}
	_, err := c.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 &c.table,
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR created_gte <= :t"),
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

// Skip records that ev was skipped for reason (already scrubbed): an item
// beside the checkpoint, kept as long as inbox items are.
func (c *Checkpoints) Skip(ctx context.Context, provider string, ev webhook.Event, reason string) error {
	now := c.now().UTC()
	item := checkpointKey(provider, SkippedPrefix+string(ev.Key()))
	item["event_type"] = &types.AttributeValueMemberS{Value: ev.Type}
	item["created"] = &types.AttributeValueMemberS{Value: ev.Created.UTC().Format(time.RFC3339)}
	item["reason"] = &types.AttributeValueMemberS{Value: reason}
	item["skipped_at"] = &types.AttributeValueMemberS{Value: now.Format(time.RFC3339Nano)}
	item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(inbox.DefaultTTL).Unix(), 10)}
	if _, err := c.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &c.table, Item: item}); err != nil {
		return fmt.Errorf("record skipped %s: %w", ev.Key(), err)
	}
	return nil
}
