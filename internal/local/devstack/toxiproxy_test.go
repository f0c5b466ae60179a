package devstack

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// TestToxiproxyInFrontOfDynamoDB checks the proxy path the fault
// scenarios use: a DynamoDB client through a toxiproxy proxy works, fails
// while a reset_peer toxic is on, and works again once it is removed.
func TestToxiproxyInFrontOfDynamoDB(t *testing.T) {
	e := forTest(t)
	ctx := context.Background()
	tp, err := StartToxiproxy(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tp.Stop(); err != nil {
			t.Error(err)
		}
	})
	p, proxied, err := tp.Proxy("dynamodb", e.DynamoDBURL)
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(e.configAt(proxied))
	list := func() error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
		return err
	}
	if err := list(); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	if _, err := p.AddToxic("reset", "reset_peer", "downstream", 1, map[string]any{"timeout": 0}); err != nil {
		t.Fatal(err)
	}
	if err := list(); err == nil {
		t.Error("ListTables succeeded through a proxy that resets every connection")
	} else if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ListTables hung instead of failing on a reset: %v", err)
	}
	if err := p.RemoveToxic("reset"); err != nil {
		t.Fatal(err)
	}
	if err := list(); err != nil {
		t.Errorf("after the toxic is removed: %v", err)
	}
}
