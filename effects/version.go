package effects

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Version orders the events that write one record, so that the record is a
// pure function of the set of events whatever their arrival order.
//
// At is the provider's event creation time in Unix seconds (Stripe's
// "created"). Stripe's clock has one-second resolution, so two events often
// share At; the tie is broken by EventID, compared as bytes: the event whose
// ID sorts last wins. Event IDs carry no order of their own, so the tie rule
// is arbitrary but stable: every arrival order gives the same result.
type Version struct {
	At      int64  `json:"at"`
	EventID string `json:"event_id"`
}

// After reports whether v is newer than o under the ordering above.
func (v Version) After(o Version) bool {
	if v.At != o.At {
		return v.At > o.At
	}
	return v.EventID > o.EventID
}

// String returns the version as "<at>/<event id>".
func (v Version) String() string { return strconv.FormatInt(v.At, 10) + "/" + v.EventID }

// Attributes PutIfNewer stores the version in.
const (
	attrVersionAt    = "version_at"
	attrVersionEvent = "version_event"
)

// PutIfNewer writes item, which must include the table key (pk and sk), only
// if the stored record does not exist, has no version, or has an older one.
// It stores v in the attributes version_at (number) and version_event
// (string) and replaces the whole item. applied is false, with no error,
// when the stored version is newer than or equal to v, so a redelivery of
// the same event is a no-op. It is one conditional PutItem, never a read
// followed by a write. item is not modified.
func PutIfNewer(ctx context.Context, db putter, table string, item map[string]types.AttributeValue, v Version) (applied bool, err error) {
	if err := checkKey(item); err != nil {
		return false, err
	}
	if v.EventID == "" {
		return false, invalidf("version of %s has no event ID", describeKey(item))
	}
	full := make(map[string]types.AttributeValue, len(item)+2)
	for k, a := range item {
		full[k] = a
	}
	full[attrVersionAt] = &types.AttributeValueMemberN{Value: strconv.FormatInt(v.At, 10)}
	full[attrVersionEvent] = str(v.EventID)
	return putIf(ctx, db, &dynamodb.PutItemInput{
		TableName: &table,
		Item:      full,
		ConditionExpression: aws.String("attribute_not_exists(pk) OR attribute_not_exists(#at) OR #at < :at" +
			" OR (#at = :at AND (attribute_not_exists(#ev) OR #ev < :ev))"),
		ExpressionAttributeNames: map[string]string{"#at": attrVersionAt, "#ev": attrVersionEvent},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":at": full[attrVersionAt],
			":ev": full[attrVersionEvent],
		},
	}, fmt.Sprintf("put %s in %s if newer than %s", describeKey(item), table, v))
}

// VersionOf returns the version PutIfNewer stored in item, and whether it
// has one.
func VersionOf(item map[string]types.AttributeValue) (Version, bool) {
	at, ok := item[attrVersionAt].(*types.AttributeValueMemberN)
	if !ok {
		return Version{}, false
	}
	n, err := strconv.ParseInt(at.Value, 10, 64)
	if err != nil {
		return Version{}, false
	}
	return Version{At: n, EventID: attrString(item, attrVersionEvent)}, true
}
