package effects

// This file is the only place that knows how the DynamoDB tests get a
// database: it starts one dynalite for the test binary and gives each test a
// fresh table. Replace dynamoForTest's body with devstack.ForTest(t) when
// that package lands, and delete the rest.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// testDynamoDB is what the tests call: the package's interface plus what the
// tests use to set up and inspect tables.
type testDynamoDB interface {
	dynamoDB
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

var dynalite struct {
	once   sync.Once
	cmd    *exec.Cmd
	client *dynamodb.Client
	err    error
	tables atomic.Int64
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dynalite.cmd != nil {
		dynalite.cmd.Process.Kill()
		dynalite.cmd.Wait()
	}
	os.Exit(code)
}

// dynamoForTest returns a DynamoDB client and the name of a new, empty table
// keyed by pk and sk (strings). It skips the test under -short and fails it
// when dynalite cannot start.
func dynamoForTest(t *testing.T) (testDynamoDB, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping DynamoDB integration test under -short (it starts dynalite with node)")
	}
	dynalite.once.Do(func() { dynalite.client, dynalite.err = startDynalite() })
	if dynalite.err != nil {
		t.Fatalf("start dynalite: %v", dynalite.err)
	}
	table := fmt.Sprintf("test-%d", dynalite.tables.Add(1))
	ctx := context.Background()
	_, err := dynalite.client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatalf("create table %s: %v", table, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(dynalite.client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 10*time.Millisecond, 100*time.Millisecond
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &table}, 10*time.Second); err != nil {
		t.Fatalf("wait for table %s: %v", table, err)
	}
	return dynalite.client, table
}

func startDynalite() (*dynamodb.Client, error) {
	cli, err := filepath.Abs("../../local/node_modules/dynalite/cli.js")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("dynalite not installed (run npm ci in local/): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command("node", cli, "--host", "127.0.0.1", "--port", port, "--createTableMs", "0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	dynalite.cmd = cmd
	for deadline := time.Now().Add(15 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("dynalite did not listen on %s: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://" + addr),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	}), nil
}
