package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// dynamoDB is what the Ledger calls; *dynamodb.Client has it.
type dynamoDB interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Attribute names of the table key.
const (
	attrPK = "pk"
	attrSK = "sk"
)

// putIf makes in, a conditional PutItem: applied is false, with no error,
// when DynamoDB answers that the condition did not hold. It is the only
// place that looks at SDK error types; what names the write in any other
// error.
func putIf(ctx context.Context, db dynamoDB, in *dynamodb.PutItemInput, what string) (applied bool, err error) {
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

func attrString(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
