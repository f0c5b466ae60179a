package inbox

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/webhook"
)

// attrs is a DynamoDB item or key, as the SDK holds it.
type attrs = map[string]types.AttributeValue

// The status item's attributes. Times an operator reads are RFC 3339
// strings (timeLayout); times the store compares are epoch milliseconds;
// expires_at is epoch seconds because DynamoDB's TTL wants that.
func marshal(it Item) attrs {
	m := attrs{
		"pk":             str(string(it.Key)),
		"sk":             str(SortEvent),
		"status":         str(string(it.Status)),
		"provider":       str(it.Provider),
		"event_type":     str(it.EventType),
		"livemode":       &types.AttributeValueMemberBOOL{Value: it.Livemode},
		"created":        num(it.Created.Unix()),
		"received_at":    str(formatTime(it.ReceivedAt)),
		"enqueued_at":    millis(it.EnqueuedAt),
		"payload_sha256": str(it.PayloadSHA256),
		"expires_at":     num(it.ExpiresAt.Unix()),
		"attempts":       num(int64(it.Attempts)),
	}
	if !it.Status.Final() {
		m["pending"] = str(pendingShard(it.Key))
	}
	if it.PayloadObject != "" {
		m[attrPayloadObject] = str(it.PayloadObject)
	}
	if it.PayloadRemoved != "" {
		m[attrPayloadRemoved] = str(it.PayloadRemoved)
		m[attrRemovedAt] = str(formatTime(it.RemovedAt))
	}
	if len(it.Subjects) > 0 {
		m[attrSubjects] = subjectSet(it.Subjects)
	}
	if it.EraseWhenFinished {
		m[attrErasePending] = str(retainErase)
	}
	return m
}

// subjectSet returns hashes (hex, checked by CheckSubjects) as the
// binary set the status item stores: half the bytes of the hex.
func subjectSet(hashes []string) types.AttributeValue {
	set := make([][]byte, len(hashes))
	for i, h := range hashes {
		set[i], _ = hex.DecodeString(h)
	}
	return &types.AttributeValueMemberBS{Value: set}
}

// subjectsOf returns the hashes of the binary set name of m, as hex.
func subjectsOf(m attrs, name string) []string {
	v, _ := m[name].(*types.AttributeValueMemberBS)
	if v == nil {
		return nil
	}
	out := make([]string, len(v.Value))
	for i, b := range v.Value {
		out[i] = hex.EncodeToString(b)
	}
	slices.Sort(out)
	return out
}

// marshalClaim returns the item a claim puts: the status item, with the
// payload compressed in it when packed is not nil.
func marshalClaim(it Item, packed []byte) attrs {
	m := marshal(it)
	if packed != nil {
		m[attrPayloadDeflate] = &types.AttributeValueMemberB{Value: packed}
	}
	return m
}

func unmarshal(m attrs) (Item, error) {
	var it Item
	var err error
	getN := func(name string) int64 {
		v, ok := m[name].(*types.AttributeValueMemberN)
		if !ok {
			return 0
		}
		n, perr := strconv.ParseInt(v.Value, 10, 64)
		if perr != nil && err == nil {
			err = fmt.Errorf("attribute %s: %w", name, perr)
		}
		return n
	}
	getT := func(name string) time.Time {
		s := getS(m, name)
		if s == "" {
			return time.Time{}
		}
		t, perr := parseTime(s)
		if perr != nil && err == nil {
			err = fmt.Errorf("attribute %s: %w", name, perr)
		}
		return t
	}
	fromMillis := func(name string) time.Time {
		if _, ok := m[name]; !ok {
			return time.Time{}
		}
		return time.UnixMilli(getN(name)).UTC()
	}
	it.Key = webhook.Key(getS(m, "pk"))
	it.Status = Status(getS(m, "status"))
	it.Provider = getS(m, "provider")
	it.EventType = getS(m, "event_type")
	if b, ok := m["livemode"].(*types.AttributeValueMemberBOOL); ok {
		it.Livemode = b.Value
	}
	it.Created = time.Unix(getN("created"), 0).UTC()
	it.ReceivedAt = getT("received_at")
	it.EnqueuedAt = fromMillis("enqueued_at")
	it.PayloadSHA256 = getS(m, "payload_sha256")
	it.ExpiresAt = time.Unix(getN("expires_at"), 0).UTC()
	it.LeaseOwner = getS(m, "lease_owner")
	if from := getS(m, "taken_from"); from != noOwner {
		it.TakenFrom = from
	}
	it.LeaseUntil = fromMillis("lease_until")
	it.Attempts = int(getN("attempts"))
	it.InfraFailures = int(getN("infra_failures"))
	it.LastError = getS(m, "last_error")
	it.ProcessedAt = getT("processed_at")
	it.Outcome = getS(m, "outcome")
	it.RenewAfter = fromMillis("renew_after")
	it.PayloadObject = getS(m, attrPayloadObject)
	it.PayloadRemoved = getS(m, attrPayloadRemoved)
	it.RemovedAt = getT(attrRemovedAt)
	it.Subjects = subjectsOf(m, attrSubjects)
	it.EraseWhenFinished = getS(m, attrErasePending) != ""
	if b := getB(m, attrPayloadDeflate); b != nil && err == nil {
		it.Payload, err = inflate(b)
	}
	if err != nil {
		return Item{}, fmt.Errorf("inbox item %s: %w", it.Key, err)
	}
	return it, nil
}

// attrPayloadObject is the status item's attribute naming the S3 object
// of a payload too large for an item (Item.PayloadObject).
const attrPayloadObject = "payload_object"

// noOwner is taken_from of a lease that took over nobody's.
const noOwner = "-"

func itemKey(key webhook.Key, sk string) attrs {
	return attrs{"pk": str(string(key)), "sk": str(sk)}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func millis(t time.Time) types.AttributeValue { return num(t.UnixMilli()) }

// timeLayout is how the table writes the times a person reads and those
// an index sorts by (processed_at, an audit record's): UTC with nine
// fractional digits always, so the text sorts as the time does. RFC 3339
// with its zeros cut, which earlier versions wrote and parseTime still
// reads, does not: "…:05Z" sorts after "…:05.9Z".
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// parseTime reads a time the table holds, in timeLayout or in any RFC 3339
// form.
func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// getS returns the string attribute name of m, or "".
func getS(m attrs, name string) string {
	v, _ := m[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

// getB returns the binary attribute name of m, or nil.
func getB(m attrs, name string) []byte {
	v, _ := m[name].(*types.AttributeValueMemberB)
	if v == nil {
		return nil
	}
	return v.Value
}
