package devstack

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type cfnKey struct{ AttributeName, KeyType string }

type cfnThroughput struct{ ReadCapacityUnits, WriteCapacityUnits flexInt }

type cfnIndex struct {
	IndexName  string
	KeySchema  []cfnKey
	Projection struct {
		ProjectionType   string
		NonKeyAttributes []string
	}
	ProvisionedThroughput *cfnThroughput
}

type cfnTable struct {
	TableName            string
	AttributeDefinitions []struct{ AttributeName, AttributeType string }
	KeySchema            []cfnKey
	GlobalSecondaryIndexes,
	LocalSecondaryIndexes []cfnIndex
	BillingMode           string
	ProvisionedThroughput *cfnThroughput
}

// createTable creates the table from the properties DynamoDB's CreateTable
// shares with CloudFormation. TimeToLiveSpecification is not applied:
// dynalite has no TTL (items never expire locally, so tests set and read
// expires_at but cannot watch it act). StreamSpecification, SSE, point-in-time
// recovery, contributor insights and tags have no local meaning and are
// skipped too.
func (s *Stack) createTable(ctx context.Context, db *dynamodb.Client, id string) error {
	m, err := s.resolveProps(id, "TableName", "AttributeDefinitions", "KeySchema",
		"GlobalSecondaryIndexes", "LocalSecondaryIndexes", "BillingMode", "ProvisionedThroughput")
	if err != nil {
		return err
	}
	var p cfnTable
	if err := roundTrip(m, &p); err != nil {
		return err
	}
	if p.TableName == "" {
		p.TableName = s.defaultName(id)
	}
	in := &dynamodb.CreateTableInput{
		TableName: aws.String(p.TableName),
		KeySchema: keySchema(p.KeySchema),
	}
	for _, a := range p.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, dbtypes.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName),
			AttributeType: dbtypes.ScalarAttributeType(a.AttributeType),
		})
	}
	onDemand := p.BillingMode == string(dbtypes.BillingModePayPerRequest)
	if onDemand {
		in.BillingMode = dbtypes.BillingModePayPerRequest
	} else {
		in.BillingMode = dbtypes.BillingModeProvisioned
		in.ProvisionedThroughput = throughput(p.ProvisionedThroughput)
	}
	for _, g := range p.GlobalSecondaryIndexes {
		gsi := dbtypes.GlobalSecondaryIndex{
			IndexName:  aws.String(g.IndexName),
			KeySchema:  keySchema(g.KeySchema),
			Projection: projection(g),
		}
		if !onDemand {
			gsi.ProvisionedThroughput = throughput(g.ProvisionedThroughput)
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gsi)
	}
	for _, l := range p.LocalSecondaryIndexes {
		in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, dbtypes.LocalSecondaryIndex{
			IndexName:  aws.String(l.IndexName),
			KeySchema:  keySchema(l.KeySchema),
			Projection: projection(l),
		})
	}
	if _, err := db.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("create %s: %w", p.TableName, err)
	}
	s.Tables[id] = p.TableName
	return nil
}

func keySchema(ks []cfnKey) []dbtypes.KeySchemaElement {
	var out []dbtypes.KeySchemaElement
	for _, k := range ks {
		out = append(out, dbtypes.KeySchemaElement{
			AttributeName: aws.String(k.AttributeName),
			KeyType:       dbtypes.KeyType(k.KeyType),
		})
	}
	return out
}

func projection(ix cfnIndex) *dbtypes.Projection {
	p := &dbtypes.Projection{ProjectionType: dbtypes.ProjectionType(ix.Projection.ProjectionType)}
	if p.ProjectionType == "" {
		p.ProjectionType = dbtypes.ProjectionTypeAll
	}
	p.NonKeyAttributes = ix.Projection.NonKeyAttributes
	return p
}

// throughput returns t, or 1/1 capacity units when the template sets none.
func throughput(t *cfnThroughput) *dbtypes.ProvisionedThroughput {
	r, w := int64(1), int64(1)
	if t != nil {
		r, w = int64(t.ReadCapacityUnits), int64(t.WriteCapacityUnits)
	}
	return &dbtypes.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(r), WriteCapacityUnits: aws.Int64(w)}
}

// waitTableActive polls DescribeTable until the table and its indexes are
// ACTIVE. dynalite, started with createTableMs 0, is there at once.
func waitTableActive(ctx context.Context, db *dynamodb.Client, name string) error {
	for {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("describe %s: %w", name, err)
		}
		active := out.Table.TableStatus == dbtypes.TableStatusActive
		for _, g := range out.Table.GlobalSecondaryIndexes {
			active = active && g.IndexStatus == dbtypes.IndexStatusActive
		}
		if active {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s to be ACTIVE: %w", name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
