package effects

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
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
)

// Attribute names of the table key.
const (
	attrPK = "pk"
	attrSK = "sk"
)

// putIf makes in, a conditional PutItem: applied is false, with no error,
// when DynamoDB answers that the condition did not hold. It is the only
// place that looks at SDK error types; what names the write in any other
// error.
func putIf(ctx context.Context, db putter, in *dynamodb.PutItemInput, what string) (applied bool, err error) {
	_, err = db.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ccf):
		return false, nil
	default:
		return false, fmt.Errorf("%s: %w", what, err)
	}
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
	return putIf(ctx, db, &dynamodb.PutItemInput{
		TableName:           &table,
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}, fmt.Sprintf("put %s in %s", describeKey(item), table))
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

func attrString(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
