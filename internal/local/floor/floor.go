// Package floor is the floor program that hookinbox's receiver is
// measured against: plain aws-sdk-go-v2, per request one conditional
// PutItem carrying the body as received and, when it wins, one
// SendMessage; no verification, no compression, no logging.
//
// The floor is the least a receiver that keeps hookinbox's crash-safety
// promises must do, so its item carries what those promises need:
//   - the body, because a receiver that answers 2xx must be able to
//     recover the event afterwards (no claim without a recoverable
//     payload);
//   - the two attributes of the inbox table's `pending` index (a shard
//     and enqueued_at), because a claim whose message is lost (the
//     function died between the two calls) must be found again without a
//     scan. DynamoDB writes the index entry inside the same PutItem: no
//     request is added.
//
// The item is {pk: "floor#<sha256 of the body>", sk: "event",
// received_at: epoch seconds, payload: the body, pending: a shard,
// enqueued_at: epoch milliseconds}; the message body is the key.
// `hookinbox load` drives it beside the receiver on the same emulators,
// and its bootstrap (cmd/floor) is the cold-start baseline. It is not
// part of the application: no template function uses it.
//
// A Handler is safe for concurrent use.
package floor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Handler claims each request body once and enqueues its key.
type Handler struct {
	db       *dynamodb.Client
	queue    *sqs.Client
	table    string
	queueURL string
}

// New returns the floor, writing to table (key pk, sk; the inbox
// table's `pending` index) and sending to queueURL.
func New(db *dynamodb.Client, queue *sqs.Client, table, queueURL string) *Handler {
	return &Handler{db: db, queue: queue, table: table, queueURL: queueURL}
}

// Handle answers 200 {"status":"accepted"} once it has claimed the body's
// key (the SHA-256 of the body: the same bytes are the same event) and
// sent it, 200 {"status":"duplicate"} when the key was claimed before, and
// 500 when either call fails.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	sum := sha256.Sum256([]byte(req.Body))
	key := "floor#" + hex.EncodeToString(sum[:])
	now := time.Now()
	_, err := h.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(h.table),
		Item: map[string]types.AttributeValue{
			"pk":          &types.AttributeValueMemberS{Value: key},
			"sk":          &types.AttributeValueMemberS{Value: "event"},
			"received_at": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)},
			"payload":     &types.AttributeValueMemberB{Value: []byte(req.Body)},
			"pending":     &types.AttributeValueMemberS{Value: strconv.Itoa(int(sum[0] % pendingShards))},
			"enqueued_at": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.UnixMilli(), 10)},
		},
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return answer(200, `{"status":"duplicate"}`), nil
	case err != nil:
		return answer(500, `{"error":"claim failed"}`), nil
	}
	if _, err := h.queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(h.queueURL), MessageBody: aws.String(key)}); err != nil {
		return answer(500, `{"error":"send failed"}`), nil
	}
	return answer(200, `{"status":"accepted"}`), nil
}

func answer(status int, body string) events.APIGatewayV2HTTPResponse {
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: body}
}

// Build builds a Handler from the receiver's own variables, INBOX_TABLE
// and EVENTS_QUEUE_URL, so the floor runs wherever the receiver does
// (lambdafn.Builder).
func Build(_ context.Context, cfg aws.Config, getenv func(string) string, _ *slog.Logger) (any, error) {
	table, queueURL := getenv("INBOX_TABLE"), getenv("EVENTS_QUEUE_URL")
	if table == "" || queueURL == "" {
		return nil, errors.New("floor: INBOX_TABLE and EVENTS_QUEUE_URL are required")
	}
	return New(dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg), table, queueURL).Handle, nil
}

// pendingShards is inbox.PendingShards (the floor does not link inbox):
// the shard only spreads the entries, any value is an entry.
const pendingShards = 8
