package inbox

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/webhook"
)

// Erasure is the audit record of one erasure: no personal data, only the
// subject's hash.
type Erasure struct {
	At          time.Time
	By          string // who asked: "cli:<user>", "shopify customers/redact <key>"
	SubjectHash string
	Events      int // events whose payload it erased, or marked to erase once finished
	Copies      int // stored copies it removed (Footprint.Copies)
	Waiting     int // events it marked: not finished, erased once they are
	Queued      int // whole events deleted from a queue (the Stripe EventBridge DLQ)
}

// Progress is how far an erasure that an event asked for (a compliance
// webhook) has come, kept beside that event, so its next attempt goes on
// where this one stopped and does nothing twice.
type Progress struct {
	Started                         time.Time // when it began: its audit record's time
	Cursor                          string    // where listing the subjects' events goes on (Store.SubjectEvents)
	Listed                          bool      // every event listed has been erased, or marked
	Events, Copies, Waiting, Queued int
	Done                            bool // audited: nothing is left to do
}

// DataRequest is the record of a provider's request for what is held
// about people (Shopify's customers/data_request): who asked, the
// subjects' hash, and the listing hookinbox made, as JSON
// (privacy.Report). It holds no personal data.
type DataRequest struct {
	At          time.Time
	By          string // "shopify customers/data_request shopify#<id>"
	Reference   string // the provider's name for the request: "data request <id>"
	SubjectHash string
	Report      []byte
}

// Sort key of the progress item in the partition of the event that asked.
const sortErasure = "erasure"

// dataRequestPartition holds the DataRequest records.
const dataRequestPartition = "audit:data-request"

// RecordErasure implements Store with one PutItem, kept without expiry;
// the same record again (At and SubjectHash) overwrites it.
func (s *DynamoDB) RecordErasure(ctx context.Context, e Erasure) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: attrs{
		"pk": str(erasurePartition), "sk": str(formatTime(e.At) + "#" + e.SubjectHash),
		"at": str(formatTime(e.At)), "by": str(e.By), "subject_hash": str(e.SubjectHash),
		"events": num(int64(e.Events)), "copies": num(int64(e.Copies)),
		"waiting": num(int64(e.Waiting)), "queued": num(int64(e.Queued)),
	}})
	if err != nil {
		return fmt.Errorf("record erasure: %w", err)
	}
	return nil
}

// Erasures implements Store with one Query.
func (s *DynamoDB) Erasures(ctx context.Context) ([]Erasure, error) {
	items, err := s.partition(ctx, erasurePartition)
	if err != nil {
		return nil, fmt.Errorf("erasures: %w", err)
	}
	var out []Erasure
	for _, av := range items {
		at, _ := parseTime(getS(av, "at"))
		out = append(out, Erasure{At: at, By: getS(av, "by"), SubjectHash: getS(av, "subject_hash"),
			Events: intOf(av, "events"), Copies: intOf(av, "copies"), Waiting: intOf(av, "waiting"), Queued: intOf(av, "queued")})
	}
	return out, nil
}

// ErasureProgress implements Store with one consistent GetItem.
func (s *DynamoDB) ErasureProgress(ctx context.Context, key webhook.Key) (Progress, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(key, sortErasure), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Progress{}, fmt.Errorf("erasure progress of %s: %w", key, err)
	}
	av := out.Item
	if av == nil {
		return Progress{}, nil
	}
	started, _ := parseTime(getS(av, "started"))
	return Progress{Started: started, Cursor: getS(av, "cursor"), Listed: getBool(av, "listed"), Done: getBool(av, "done"),
		Events: intOf(av, "events"), Copies: intOf(av, "copies"), Waiting: intOf(av, "waiting"), Queued: intOf(av, "queued")}, nil
}

// SaveErasureProgress implements Store with one PutItem, which expires
// with the event (DefaultTTL after p.Started).
func (s *DynamoDB) SaveErasureProgress(ctx context.Context, key webhook.Key, p Progress) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: attrs{
		"pk": str(string(key)), "sk": str(sortErasure), "started": str(formatTime(p.Started)), "cursor": str(p.Cursor),
		"listed": &types.AttributeValueMemberBOOL{Value: p.Listed}, "done": &types.AttributeValueMemberBOOL{Value: p.Done},
		"events": num(int64(p.Events)), "copies": num(int64(p.Copies)), "waiting": num(int64(p.Waiting)), "queued": num(int64(p.Queued)),
		"expires_at": num(p.Started.Add(DefaultTTL).Unix()),
	}})
	if err != nil {
		return fmt.Errorf("save erasure progress of %s: %w", key, err)
	}
	return nil
}

// RecordDataRequest implements Store with one PutItem, kept without
// expiry; the same request again (At and By) overwrites it.
func (s *DynamoDB) RecordDataRequest(ctx context.Context, r DataRequest) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: attrs{
		"pk": str(dataRequestPartition), "sk": str(formatTime(r.At) + "#" + r.By),
		"at": str(formatTime(r.At)), "by": str(r.By), "reference": str(r.Reference), "subject_hash": str(r.SubjectHash),
		"report": &types.AttributeValueMemberB{Value: r.Report},
	}})
	if err != nil {
		return fmt.Errorf("record data request: %w", err)
	}
	return nil
}

// DataRequests implements Store with one Query.
func (s *DynamoDB) DataRequests(ctx context.Context) ([]DataRequest, error) {
	items, err := s.partition(ctx, dataRequestPartition)
	if err != nil {
		return nil, fmt.Errorf("data requests: %w", err)
	}
	var out []DataRequest
	for _, av := range items {
		at, _ := parseTime(getS(av, "at"))
		out = append(out, DataRequest{At: at, By: getS(av, "by"), Reference: getS(av, "reference"),
			SubjectHash: getS(av, "subject_hash"), Report: getB(av, "report")})
	}
	return out, nil
}

// intOf returns the number attribute name of m, or 0.
func intOf(m attrs, name string) int {
	v, _ := m[name].(*types.AttributeValueMemberN)
	if v == nil {
		return 0
	}
	n, _ := strconv.Atoi(v.Value)
	return n
}

// getBool returns the boolean attribute name of m, or false.
func getBool(m attrs, name string) bool {
	v, _ := m[name].(*types.AttributeValueMemberBOOL)
	return v != nil && v.Value
}
