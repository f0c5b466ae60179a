package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/stacktemplate"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

// invoiceBusiness is a business keyed by invoice, as a team's should be:
// each paid invoice is one item, its customer and subscription.
const invoiceBusiness = `
Description: invoices
EventTypes:
  stripe: [invoice.paid]
Resources:
  InvoicesTable:
    Type: AWS::DynamoDB::Table
    DeletionPolicy: Delete
    UpdateReplacePolicy: Delete
    Properties:
      AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
      BillingMode: PAY_PER_REQUEST
Processor:
  Environment:
    INVOICES_TABLE: !Ref InvoicesTable
  Policy:
    - {Sid: Invoices, Effect: Allow, Action: dynamodb:PutItem, Resource: !GetAtt InvoicesTable.Arn}
`

func invoices(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
	db, table := processorfn.DynamoDB(ctx, cfg), getenv("INVOICES_TABLE")
	paid := func(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
		var body struct {
			Data struct {
				Object struct{ ID, Customer, Subscription string } `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(ev.Raw, &body); err != nil {
			return webhook.Permanent(err)
		}
		in := body.Data.Object
		return effects.Do(ctx, fx, "record-invoice", func(ctx context.Context, _ string) error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
				"pk":           &types.AttributeValueMemberS{Value: in.ID},
				"customer":     &types.AttributeValueMemberS{Value: in.Customer},
				"subscription": &types.AttributeValueMemberS{Value: in.Subscription},
			}})
			return err
		})
	}
	return processorfn.NewMux().On("stripe", paid, "invoice.paid"), nil
}

// TestChaosInvoiceKeyedBusinessIsSame: a business keyed by invoice ends
// the same after the corpus delivered twice, shuffled, as after one
// in-order delivery: every invoice of a generated corpus is its
// customer's own, named alike by all its events.
func TestChaosInvoiceKeyedBusinessIsSame(t *testing.T) {
	out, err := stacktemplate.Generate([]byte(invoiceBusiness))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := samtemplate.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	var corpus bytes.Buffer
	for _, line := range Generate(80, 33, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)) {
		corpus.Write(append(line, '\n'))
	}
	evs, err := ReadEvents(&corpus)
	if err != nil {
		t.Fatal(err)
	}
	var keys []webhook.Key
	for _, ev := range evs {
		keys = append(keys, ev.Key())
	}
	ctx := context.Background()
	emu := devstacktest.ForTest(t)
	opts := LocalOptions{Builders: map[string]lambdafn.Builder{"ProcessorFunction": processorfn.Builder(invoices)}}
	run := func(name string, cfg Config) Snapshot {
		t.Helper()
		l, err := NewLocal(ctx, emu, tpl, fmt.Sprintf("chaos-inv-%s-%d", name, time.Now().UnixNano()%1e6), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		cfg.QuietWithin = 2 * time.Minute
		if _, err := Run(ctx, l, evs, cfg); err != nil {
			t.Fatal(err)
		}
		snap, err := l.Snapshot(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	ref := run("ref", Config{})
	got := run("run", Config{Dup: 2, Shuffle: true, Concurrency: 8, QueueDups: true, Seed: 7})
	paid := 0
	for _, r := range ref.Business {
		if strings.HasPrefix(r, "InvoicesTable ") {
			paid++
		}
	}
	if paid < 2 {
		t.Fatalf("the reference recorded %d invoices, want several:\n%s", paid, strings.Join(ref.Business, "\n"))
	}
	if diffs := Compare(ref, got); len(diffs) > 0 {
		t.Errorf("DIFFERENT from the reference:\n%s", strings.Join(diffs, "\n"))
	}
}
