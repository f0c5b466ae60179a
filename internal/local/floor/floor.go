// Package floor is the physical floor of a webhook receiver, kept to
// measure hookinbox's receiver against: per request, one conditional
// PutItem carrying the body as received and, when it wins, one
// SendMessage; no verification, no compression, no logging.
//
// The floor is the least a receiver that keeps hookinbox's crash-safety
// promises must do, so its item carries what those promises need:
//   - the body, because a receiver that answers 2xx must be able to
//     recover the event afterwards (no claim without a recoverable
//     payload, DESIGN rule 10);
//   - the two attributes of the inbox table's `pending` index (a shard
//     and enqueued_at), because a claim whose message is lost (the
//     function died between the two calls) must be found again without a
//     scan (DESIGN rule 2). DynamoDB writes the index entry inside the
//     same PutItem: no request is added, and on the emulators it is work
//     the receiver's claim makes them do too.
//
// Bare drops the index entry, for the floor as the text first
// put it (FLOOR_PENDING_INDEX=0). It makes its calls through the same
// client as the receiver (internal/platform/awsapi, for DynamoDB and SQS),
// so that the comparison measures what the receiver does beyond the
// floor, not which client each uses; when the receiver's clients change,
// change these with them. `hookinbox load` drives it beside the receiver
// on the same emulators, and its bootstrap (cmd/floor) is the cold-start
// baseline. It is not part of the application: no template function uses
// it.
//
// A Handler is safe for concurrent use.
package floor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
)

// putter and sender list the calls a Handler makes.
type putter interface {
	PutItem(context.Context, *awsapi.PutItemInput) (*awsapi.PutItemOutput, error)
}

type sender interface {
	SendMessage(context.Context, *awsapi.SendMessageInput) (*awsapi.SendMessageOutput, error)
}

// Handler claims each request body once and enqueues its key.
type Handler struct {
	db       putter
	queue    sender
	table    string
	queueURL string
	bare     bool // write no pending index attributes (Bare)
}

// New returns the floor, writing to table (key pk, sk; the inbox
// table's `pending` index) and sending to queueURL.
func New(db putter, queue sender, table, queueURL string) *Handler {
	return &Handler{db: db, queue: queue, table: table, queueURL: queueURL}
}

// Bare has h's items carry no `pending` index attributes, so that
// DynamoDB writes no index entry with them: a floor without DESIGN rule
// 2's way to find a lost claim, for measuring what that entry costs (the
// variable FLOOR_PENDING_INDEX=0, say through `hookinbox load --env`). It
// returns h.
func (h *Handler) Bare() *Handler {
	h.bare = true
	return h
}

// Handle answers 200 {"status":"accepted"} once it has claimed the body's
// key (the SHA-256 of the body: the same bytes are the same event) and
// sent it, 200 {"status":"duplicate"} when the key was claimed before, and
// 500 when either call fails.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	sum := sha256.Sum256([]byte(req.Body))
	key := "floor#" + hex.EncodeToString(sum[:])
	now := time.Now()
	item := awsapi.Item{
		"pk":          awsapi.S(key),
		"sk":          awsapi.S("event"),
		"received_at": awsapi.Int(now.Unix()),
		"payload":     awsapi.B([]byte(req.Body)),
	}
	if !h.bare {
		item["pending"] = awsapi.S(strconv.Itoa(int(sum[0] % pendingShards)))
		item["enqueued_at"] = awsapi.Int(now.UnixMilli())
	}
	_, err := h.db.PutItem(ctx, &awsapi.PutItemInput{
		TableName:           h.table,
		Item:                item,
		ConditionExpression: "attribute_not_exists(pk)",
	})
	switch {
	case errors.Is(err, awsapi.ErrConditionalCheckFailed):
		return answer(200, `{"status":"duplicate"}`), nil
	case err != nil:
		return answer(500, `{"error":"claim failed"}`), nil
	}
	if _, err := h.queue.SendMessage(ctx, &awsapi.SendMessageInput{QueueUrl: h.queueURL, MessageBody: key}); err != nil {
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
	h := New(awsapi.DynamoDBFromConfig(cfg), awsapi.SQSFromConfig(cfg), table, queueURL)
	switch v := getenv("FLOOR_PENDING_INDEX"); v {
	case "", "1":
	case "0":
		h.Bare()
	default:
		return nil, fmt.Errorf("floor: FLOOR_PENDING_INDEX=%q: want 0 or 1", v)
	}
	return h.Handle, nil
}

// pendingShards is inbox.PendingShards (the floor does not link inbox):
// the shard only spreads the entries, any value is an entry.
const pendingShards = 8
