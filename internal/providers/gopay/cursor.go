package gopay

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// sweepCursor is where the sweep stands: the sort key it reached among
// the watched payments, when the sweep under way started, and the sort
// key it reached among the unknown ids.
type sweepCursor struct {
	after        string
	since        time.Time
	unknownAfter string
}

// cursor returns where the sweep stands (from the first payment, since
// now, when there is no sweep under way).
func (g *sweeper) cursor(ctx context.Context, now time.Time) (sweepCursor, error) {
	w := g.watch
	out, err := w.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &w.Table, ConsistentRead: aws.Bool(true), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: gopayWatchPartition},
		"sk": &types.AttributeValueMemberS{Value: gopayCursor},
	}})
	if err != nil {
		return sweepCursor{}, fmt.Errorf("load gopay checkpoint: %w", err)
	}
	c := sweepCursor{after: attrS(out.Item, "after"), unknownAfter: attrS(out.Item, "unknown_after")}
	c.since, err = time.Parse(time.RFC3339, attrS(out.Item, "since"))
	if !strings.HasPrefix(c.after, gopayWatchPrefix) || err != nil {
		c.after, c.since = gopayWatchPrefix, now
	}
	return c, nil
}

func (g *sweeper) saveCursor(ctx context.Context, c sweepCursor, now time.Time) error {
	w := g.watch
	_, err := w.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &w.Table, Item: map[string]types.AttributeValue{
		"pk":            &types.AttributeValueMemberS{Value: gopayWatchPartition},
		"sk":            &types.AttributeValueMemberS{Value: gopayCursor},
		"after":         &types.AttributeValueMemberS{Value: c.after},
		"since":         &types.AttributeValueMemberS{Value: c.since.UTC().Format(time.RFC3339)},
		"unknown_after": &types.AttributeValueMemberS{Value: c.unknownAfter},
		"updated_at":    &types.AttributeValueMemberS{Value: now.UTC().Format(time.RFC3339Nano)},
	}})
	if err != nil {
		return fmt.Errorf("save gopay checkpoint: %w", err)
	}
	return nil
}
