package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/internal/shop"
)

// businessReader reads the business state of a stack as Snapshot's
// Business lines.
type businessReader func(ctx context.Context) ([]string, error)

// shopBusiness is the example shop's state (shopRecords).
func shopBusiness(s *shop.Shop) businessReader {
	return func(ctx context.Context) ([]string, error) {
		st, err := s.State(ctx)
		if err != nil {
			return nil, err
		}
		return shopRecords(st), nil
	}
}

// tableRecords reads another business's state: every item of its tables
// (logical ID → table name), one line an item, "<logical ID> <item as
// JSON>", sorted. Such a business's records must hold nothing that
// differs between two correct runs (a time it was written, an ID an
// outside system made up) for the runs to compare equal.
func tableRecords(db *dynamodb.Client, tables map[string]string) businessReader {
	return func(ctx context.Context) ([]string, error) {
		var out []string
		for id, name := range tables {
			p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(name), ConsistentRead: aws.Bool(true)})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					return nil, fmt.Errorf("scan %s: %w", id, err)
				}
				for _, item := range page.Items {
					out = append(out, id+" "+itemJSON(item))
				}
			}
		}
		sort.Strings(out)
		return out, nil
	}
}

// itemJSON renders an item with its attributes sorted by name, each value
// as the SDK's type holds it ({"Value":"cus_1"}).
func itemJSON(item map[string]types.AttributeValue) string {
	b, _ := json.Marshal(item)
	return string(b)
}

// businessTables returns the tables of a stack that hold the business's
// records: all but the inbox.
func businessTables(tables map[string]string) map[string]string {
	out := map[string]string{}
	for id, name := range tables {
		if id != "InboxTable" {
			out[id] = name
		}
	}
	return out
}
