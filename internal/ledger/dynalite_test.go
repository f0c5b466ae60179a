package ledger

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
)

// testDynamoDB is what the tests call: the package's interface plus what the
// tests use to inspect tables.
type testDynamoDB interface {
	dynamoDB
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// dynamoForTest returns a dynalite client and the inbox table of a fresh stack made from
// template.yaml, where the ledger lives in production. It skips under -short.
func dynamoForTest(t *testing.T) (testDynamoDB, string) {
	t.Helper()
	return devstacktest.TestTable(t, "InboxTable")
}

// attrCmp compares DynamoDB attribute values by their content.
var attrCmp = cmp.Transformer("attr", func(a types.AttributeValue) string {
	switch v := a.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + v.Value
	case *types.AttributeValueMemberN:
		return "N:" + v.Value
	default:
		return fmt.Sprintf("%T", a)
	}
})
