package effects

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The DynamoDB methods each helper calls; *dynamodb.Client has them all.
type (
	putter interface {
		PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	}
	querier interface {
		Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	}
	// dynamoDB is what the Ledger needs.
	dynamoDB interface {
		putter
		querier
	}
)

// Attribute names of the table key.
const (
	attrPK = "pk"
	attrSK = "sk"
)

// isConditionFailed reports whether err is DynamoDB's answer to a write
// whose condition did not hold. It is the only place that looks at SDK
// error types.
func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// PutOnce writes item (which must include pk and sk) unless an item with the
// same key exists; applied is false, with no error, when one does. The
// existing item is left as it was, whatever its attributes. It is the write
// for records that are a pure function of one event: the email or invoice an
// event caused, a per-event delta.
func PutOnce(ctx context.Context, db putter, table string, item map[string]types.AttributeValue) (applied bool, err error) {
	if err := checkKey(item); err != nil {
		return false, err
	}
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           &table,
		Item:                item,
		ConditionExpression: ptr("attribute_not_exists(pk)"),
	})
	switch {
	case err == nil:
		return true, nil
	case isConditionFailed(err):
		return false, nil
	default:
		return false, fmt.Errorf("put %s in %s: %w", describeKey(item), table, err)
	}
}

func checkKey(item map[string]types.AttributeValue) error {
	for _, a := range []string{attrPK, attrSK} {
		if s, ok := item[a].(*types.AttributeValueMemberS); !ok || s.Value == "" {
			return invalidf("item has no string %s", a)
		}
	}
	return nil
}

func describeKey(item map[string]types.AttributeValue) string {
	pk, _ := item[attrPK].(*types.AttributeValueMemberS)
	sk, _ := item[attrSK].(*types.AttributeValueMemberS)
	if pk == nil || sk == nil {
		return "item"
	}
	return pk.Value + "/" + sk.Value
}

func ptr[T any](v T) *T { return &v }
