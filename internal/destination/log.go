package destination

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/webhook"
)

// Attempts is what the deliveries of one event to one destination came
// to: how many were tried and the last answer. `hookinbox inspect` shows
// it.
type Attempts struct {
	Destination string    `json:"destination"`
	WebhookID   string    `json:"webhook_id"`
	Attempts    int       `json:"attempts"`
	Delivered   bool      `json:"delivered"`
	LastStatus  int       `json:"last_status,omitempty"` // HTTP status; 0 for a bus or no answer
	LastAnswer  string    `json:"last_answer"`
	LastAt      time.Time `json:"last_at"`
	LastTookMS  int64     `json:"last_took_ms"`
}

// logPrefix starts the sort key of a delivery log item.
const logPrefix = "delivery#"

// logDB lists the DynamoDB calls of a Log (*dynamodb.Client).
type logDB interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Log keeps the delivery attempts of each event, per destination, in the
// inbox table, beside the event's effect ledger: pk "<provider>#<event
// id>", sk "delivery#<destination>", one UpdateItem per attempt that was
// tried (a delivery not tried because its destination was busy is not
// one). It holds status codes and short answers, never payload data.
// Safe for concurrent use.
type Log struct {
	db    logDB
	table string
	ttl   time.Duration
}

// NewLog returns the delivery log in table, whose items expire after ttl
// (none when ttl <= 0).
func NewLog(db logDB, table string, ttl time.Duration) *Log {
	return &Log{db: db, table: table, ttl: ttl}
}

// note records one attempt of the delivery of key to name.
func (l *Log) note(ctx context.Context, key webhook.Key, name string, a answer, delivered bool, at time.Time) error {
	if l == nil {
		return nil
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	values := map[string]types.AttributeValue{
		":one": n(1), ":id": s(WebhookID(key, name)), ":answer": s(a.Text), ":status": n(int64(a.Status)),
		":at": s(at.UTC().Format(time.RFC3339Nano)), ":took": n(a.Took.Milliseconds()),
		":delivered": &types.AttributeValueMemberBOOL{Value: delivered},
	}
	set := "SET webhook_id = :id, last_answer = :answer, last_status = :status, last_at = :at, last_took_ms = :took, delivered = :delivered"
	if l.ttl > 0 {
		set += ", expires_at = :exp"
		values[":exp"] = n(at.Add(l.ttl).Unix())
	}
	_, err := l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &l.table,
		Key: map[string]types.AttributeValue{
			"pk": s(string(key)), "sk": s(logPrefix + name),
		},
		UpdateExpression:          aws.String(set + " ADD attempts :one"),
		ExpressionAttributeValues: values,
	})
	if err != nil {
		return fmt.Errorf("log the delivery of %s to %s: %w", key, name, err)
	}
	return nil
}

// Read returns the delivery attempts of key, by destination name.
func (l *Log) Read(ctx context.Context, key webhook.Key) ([]Attempts, error) {
	in := &dynamodb.QueryInput{
		TableName:              &l.table,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: string(key)}, ":prefix": &types.AttributeValueMemberS{Value: logPrefix},
		},
		ConsistentRead: aws.Bool(true),
	}
	var out []Attempts
	for {
		page, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("read the delivery log of %s: %w", key, err)
		}
		for _, it := range page.Items {
			out = append(out, attemptsOf(it))
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Destination < out[j].Destination })
	return out, nil
}

func attemptsOf(it map[string]types.AttributeValue) Attempts {
	s := func(k string) string {
		v, _ := it[k].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	n := func(k string) int64 {
		v, _ := it[k].(*types.AttributeValueMemberN)
		if v == nil {
			return 0
		}
		x, _ := strconv.ParseInt(v.Value, 10, 64)
		return x
	}
	at, _ := time.Parse(time.RFC3339Nano, s("last_at"))
	delivered, _ := it["delivered"].(*types.AttributeValueMemberBOOL)
	a := Attempts{
		Destination: s("sk")[len(logPrefix):], WebhookID: s("webhook_id"), Attempts: int(n("attempts")),
		LastStatus: int(n("last_status")), LastAnswer: s("last_answer"), LastAt: at, LastTookMS: n("last_took_ms"),
	}
	a.Delivered = delivered != nil && delivered.Value
	return a
}
