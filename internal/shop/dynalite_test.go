package shop

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
)

// testDynamoDB is what the tests call: the shop's interface plus what the
// effect ledger and the tests use.
type testDynamoDB interface {
	dynamoDB
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// dynamoForTest returns a dynalite client and the shop table of a fresh stack made from template.yaml. It skips under -short.
func dynamoForTest(t *testing.T) (testDynamoDB, string) {
	t.Helper()
	return devstacktest.TestTable(t, "ShopTable")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := devstack.StopSharedStripeMock(); err != nil {
		code = 1
	}
	if err := devstack.StopShared(); err != nil {
		code = 1
	}
	os.Exit(code)
}
