package effects

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
)

// testDynamoDB is what the tests call: the package's interface plus what the
// tests use to inspect tables.
type testDynamoDB interface {
	putter
	querier
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// dynamoForTest returns a dynalite client and the inbox table of a fresh stack made from
// template.yaml, where the ledger lives in production. It skips under -short.
func dynamoForTest(t *testing.T) (testDynamoDB, string) {
	t.Helper()
	return devstacktest.TestTable(t, "InboxTable")
}
