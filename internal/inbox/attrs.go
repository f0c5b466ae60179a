package inbox

import (
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
	"github.com/hookinbox/hookinbox/webhook"
)

// The status item's attributes. Times an operator reads are RFC 3339
// strings; times the store compares are epoch milliseconds; expires_at is
// epoch seconds because DynamoDB's TTL wants that.
func marshal(it Item) awsapi.Item {
	m := awsapi.Item{
		"pk":             str(string(it.Key)),
		"sk":             str(SortEvent),
		"status":         str(string(it.Status)),
		"provider":       str(it.Provider),
		"event_type":     str(it.EventType),
		"livemode":       awsapi.Bool(it.Livemode),
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
	return m
}

// marshalClaim returns the item a claim puts: the status item, with the
// payload compressed in it when packed is not nil.
func marshalClaim(it Item, packed []byte) awsapi.Item {
	m := marshal(it)
	if packed != nil {
		m[attrPayloadDeflate] = awsapi.B(packed)
	}
	return m
}

func unmarshal(m awsapi.Item) (Item, error) {
	var it Item
	var err error
	getS := func(name string) string {
		v, _ := m[name].String()
		return v
	}
	getN := func(name string) int64 {
		n, _, perr := m[name].Int64()
		if perr != nil && err == nil {
			err = fmt.Errorf("attribute %s: %w", name, perr)
		}
		return n
	}
	getT := func(name string) time.Time {
		s := getS(name)
		if s == "" {
			return time.Time{}
		}
		t, perr := time.Parse(time.RFC3339Nano, s)
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
	it.Key = webhook.Key(getS("pk"))
	it.Status = Status(getS("status"))
	it.Provider = getS("provider")
	it.EventType = getS("event_type")
	it.Livemode, _ = m["livemode"].Boolean()
	it.Created = time.Unix(getN("created"), 0).UTC()
	it.ReceivedAt = getT("received_at")
	it.EnqueuedAt = fromMillis("enqueued_at")
	it.PayloadSHA256 = getS("payload_sha256")
	it.ExpiresAt = time.Unix(getN("expires_at"), 0).UTC()
	it.LeaseOwner = getS("lease_owner")
	if from := getS("taken_from"); from != noOwner {
		it.TakenFrom = from
	}
	it.LeaseUntil = fromMillis("lease_until")
	it.Attempts = int(getN("attempts"))
	it.InfraFailures = int(getN("infra_failures"))
	it.LastError = getS("last_error")
	it.ProcessedAt = getT("processed_at")
	it.Outcome = getS("outcome")
	it.RenewAfter = fromMillis("renew_after")
	if b, ok := m[attrPayloadDeflate].Binary(); ok && err == nil {
		it.Payload, err = inflate(b)
	}
	if err != nil {
		return Item{}, fmt.Errorf("inbox item %s: %w", it.Key, err)
	}
	return it, nil
}

// noOwner is taken_from of a lease that took over nobody's.
const noOwner = "-"

func itemKey(key webhook.Key, sk string) awsapi.Item {
	return awsapi.Item{"pk": str(string(key)), "sk": str(sk)}
}

func str(s string) awsapi.AttributeValue { return awsapi.S(s) }

func num(n int64) awsapi.AttributeValue { return awsapi.Int(n) }

func millis(t time.Time) awsapi.AttributeValue { return num(t.UnixMilli()) }

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
