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
	r := &reader{m: m}
	it := Item{
		Key:               webhook.Key(getS(m, "pk")),
		Status:            Status(getS(m, "status")),
		Provider:          getS(m, "provider"),
		EventType:         getS(m, "event_type"),
		Created:           time.Unix(r.number("created"), 0).UTC(),
		ReceivedAt:        r.time("received_at"),
		EnqueuedAt:        r.millis("enqueued_at"),
		PayloadSHA256:     getS(m, "payload_sha256"),
		ExpiresAt:         time.Unix(r.number("expires_at"), 0).UTC(),
		LeaseOwner:        getS(m, "lease_owner"),
		LeaseUntil:        r.millis("lease_until"),
		Attempts:          int(r.number("attempts")),
		InfraFailures:     int(r.number("infra_failures")),
		LastError:         getS(m, "last_error"),
		ProcessedAt:       r.time("processed_at"),
		Outcome:           getS(m, "outcome"),
		RenewAfter:        r.millis("renew_after"),
		PayloadObject:     getS(m, attrPayloadObject),
		PayloadRemoved:    getS(m, attrPayloadRemoved),
		RemovedAt:         r.time(attrRemovedAt),
		Subjects:          subjectsOf(m, attrSubjects),
		EraseWhenFinished: getS(m, attrErasePending) != "",
	}
	if b, ok := m["livemode"].(*types.AttributeValueMemberBOOL); ok {
		it.Livemode = b.Value
	}
	if from := getS(m, "taken_from"); from != noOwner {
		it.TakenFrom = from
	}
	if b := getB(m, attrPayloadDeflate); b != nil && r.err == nil {
		it.Payload, r.err = inflate(b)
	}
	if r.err != nil {
		return Item{}, fmt.Errorf("inbox item %s: %w", it.Key, r.err)
	}
	return it, nil
}

// reader reads the number and time attributes of an item, keeping the
// first that cannot be read.
type reader struct {
	m   attrs
	err error
}

// number returns the number attribute name, or 0.
func (r *reader) number(name string) int64 {
	v, ok := r.m[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	r.keep(name, err)
	return n
}

// time returns the time attribute name (parseTime), or the zero time.
func (r *reader) time(name string) time.Time {
	s := getS(r.m, name)
	if s == "" {
		return time.Time{}
	}
	t, err := parseTime(s)
	r.keep(name, err)
	return t
}

// millis returns the time attribute name held in epoch milliseconds, or
// the zero time.
func (r *reader) millis(name string) time.Time {
	if _, ok := r.m[name]; !ok {
		return time.Time{}
	}
	return time.UnixMilli(r.number(name)).UTC()
}

func (r *reader) keep(name string, err error) {
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("attribute %s: %w", name, err)
	}
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
