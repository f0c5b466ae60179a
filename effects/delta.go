package effects

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/webhook"
)

// Sort-key prefix of delta items.
const deltaPrefix = "delta#"

// AddDelta records amount for target once per event: an item with pk target,
// sk "delta#<event key>", attributes amount and event, written only if it is
// not there yet. applied is false, with no error, when the event's delta is
// already recorded; the first amount recorded stays. One event adds at most
// one delta to a target. Read the total with Balance.
func AddDelta(ctx context.Context, db putter, table, target string, key webhook.Key, amount int64) (applied bool, err error) {
	if target == "" || key == "" {
		return false, invalidf("delta needs a target and an event key, got %q and %q", target, key)
	}
	item := map[string]types.AttributeValue{
		attrPK:   str(target),
		attrSK:   str(deltaPrefix + string(key)),
		"amount": &types.AttributeValueMemberN{Value: strconv.FormatInt(amount, 10)},
		"event":  str(string(key)),
	}
	applied, err = PutOnce(ctx, db, table, item)
	if err != nil {
		return false, fmt.Errorf("add delta of %s: %w", key, err)
	}
	return applied, nil
}

// Balance returns the sum of target's deltas, read with a consistent,
// paginated Query.
func Balance(ctx context.Context, db querier, table, target string) (int64, error) {
	in := &dynamodb.QueryInput{
		TableName:              &table,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":     str(target),
			":prefix": str(deltaPrefix),
		},
		ProjectionExpression: aws.String("amount"),
		ConsistentRead:       aws.Bool(true),
	}
	var sum int64
	for {
		out, err := db.Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("balance of %s: %w", target, err)
		}
		for _, it := range out.Items {
			a, ok := it["amount"].(*types.AttributeValueMemberN)
			if !ok {
				return 0, fmt.Errorf("balance of %s: a delta has no numeric amount", target)
			}
			n, err := strconv.ParseInt(a.Value, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("balance of %s: amount %q: %w", target, a.Value, err)
			}
			if n > 0 && sum > math.MaxInt64-n || n < 0 && sum < math.MinInt64-n {
				return 0, fmt.Errorf("balance of %s overflows int64", target)
			}
			sum += n
		}
		if len(out.LastEvaluatedKey) == 0 {
			return sum, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
