package inbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// Status is where an event is in its life.
type Status string

// The statuses. RECEIVED → PROCESSING → DONE, or FAILED (will retry),
// DEAD (parked in the DLQ, needs a person), IGNORED (no handler).
const (
	Received   Status = "RECEIVED"
	Processing Status = "PROCESSING"
	Done       Status = "DONE"
	Failed     Status = "FAILED"
	Dead       Status = "DEAD"
	Ignored    Status = "IGNORED"
)

// Final reports whether no processor will touch an event in this status again
// unless a person replays it.
func (s Status) Final() bool { return s == Done || s == Dead || s == Ignored }

// Conditions callers branch on, checked with errors.Is.
var (
	// ErrAlreadyClaimed: the event was claimed before; this is a duplicate delivery.
	ErrAlreadyClaimed = errors.New("inbox: event already claimed")
	// ErrNotFound: no item for the key.
	ErrNotFound = errors.New("inbox: no such event")
	// ErrNotDue: the claim is not RECEIVED, or was enqueued within the grace period.
	ErrNotDue = errors.New("inbox: claim not due for re-enqueue")
	// ErrLeaseHeld: another worker holds a live lease on the event.
	ErrLeaseHeld = errors.New("inbox: lease held by another worker")
	// ErrLeaseRaced: the lease was refused, yet the event read back could
	// be leased: another worker changed it in between (finished an
	// attempt FAILED, or ended its lease). Waiting a moment and trying
	// again settles it.
	ErrLeaseRaced = errors.New("inbox: event changed while it was being leased")
	// ErrFinished: the event is DONE or IGNORED (for Requeue: DONE); there
	// is nothing to do.
	ErrFinished = errors.New("inbox: event already finished")
	// ErrLeaseLost: the caller no longer holds the lease (it expired and was taken over).
	ErrLeaseLost = errors.New("inbox: lease lost")
	// ErrClaimChanged: the claim is no longer the one the caller made, so it was not released.
	ErrClaimChanged = errors.New("inbox: claim changed")
	// ErrNotHeld: the event is not IGNORED, so no hold holds its claims off (EndHold).
	ErrNotHeld = errors.New("inbox: event not IGNORED")
)

// renewable reports whether it may be claimed again, at now, by an IDOnly
// notification: the earlier one is finished, so the new one must fetch
// the state again, unless its outcome holds renewals off until
// it.RenewAfter (the provider did not know the object). A DEAD event
// waits for a person instead.
func renewable(it Item, now time.Time) bool {
	return (it.Status == Done || it.Status == Ignored) && it.RenewAfter.UnixMilli() <= now.UnixMilli()
}

// PendingShards is how many index partitions unfinished items spread over,
// so the sparse "pending" index never has one hot partition key.
const PendingShards = 8

// Item is the status item of one event. It is kept small on purpose: an
// UpdateItem is billed on the larger of the old and new item.
type Item struct {
	Key           webhook.Key
	Status        Status
	Provider      string
	EventType     string
	Livemode      bool
	Created       time.Time // the provider's creation time of the event
	ReceivedAt    time.Time // when the claim was made; identifies the claim
	EnqueuedAt    time.Time // last time a message was sent for the event
	PayloadSHA256 string    // hex sha256 of the raw body
	ExpiresAt     time.Time // TTL

	LeaseOwner string
	TakenFrom  string // the owner whose expired lease the last Lease took over; "" if none
	LeaseUntil time.Time
	Attempts   int
	// InfraFailures is how many of the Attempts failed because the
	// infrastructure (the inbox store, DynamoDB, SQS) was unavailable
	// (Result.Infrastructure): the processor does not count them against
	// the event's tries.
	InfraFailures int
	LastError     string

	ProcessedAt time.Time
	Outcome     string
	// RenewAfter, on a finished IDOnly event, is when a new notification
	// of it may claim it again (Result.RenewAfter); zero: at once.
	RenewAfter time.Time

	// Payload is the raw payload when the status item carries it (see
	// Claim.Inline), so the lease that returns the item hands it over
	// without another read; nil when the payload has its own item.
	Payload []byte
	// PayloadObject is the S3 object (its key in the body bucket) that
	// keeps a payload too large for an item (see Claim.External); "" when
	// the payload is in the table.
	PayloadObject string
	// PayloadRemoved says why every stored copy of the payload is gone
	// while this item, the dedupe record, lives on: RemovedErased or
	// RemovedExpired; "" while the payload is kept. RemovedAt is when.
	PayloadRemoved string
	RemovedAt      time.Time

	// Subjects are the keyed hashes (hex) of the people the event is
	// about, from its claim (Claim.Subjects), until the processor has
	// written their index entries (Result.Indexed).
	Subjects []string
	// EraseWhenFinished says an erasure named the event while it was not
	// finished: its payload stays until it ends DONE or IGNORED, then it
	// is erased (Store.RemovePayload).
	EraseWhenFinished bool
}

// Claim is what the receiver knows of a verified event when it claims it.
type Claim struct {
	Event webhook.Event
	At    time.Time     // now
	TTL   time.Duration // how long the item lives; longer than any provider's retry window
	// Subjects are the keyed hashes (hex HMAC-SHA256) of the people the
	// event is about: they ride on the claim, and the processor indexes
	// them (Store.IndexSubjects), so the ack path writes nothing more.
	Subjects []string

	packed   []byte // the payload compressed, when it goes inline (see Prepared)
	sum      string // the payload's PayloadSHA256 (see Prepared)
	prepared bool
}

// PayloadSHA256 returns the hash of the claim's payload, as its item
// stores it: computed once by Prepared.
func (c Claim) PayloadSHA256() string {
	if c.prepared {
		return c.sum
	}
	return PayloadSHA256(c.Event.Raw)
}

// NewItem returns the status item a claim writes; it carries the payload
// when Inline.
func (c Claim) NewItem() Item {
	it, _ := c.newItem()
	return it
}

// newItem returns NewItem and the payload as the item stores it
// (compressed), or nil when the payload is not inline.
func (c Claim) newItem() (Item, []byte) {
	packed := c.packedPayload()
	it := normalize(Item{
		Key:           c.Event.Key(),
		Status:        Received,
		Provider:      c.Event.Provider,
		EventType:     c.Event.Type,
		Livemode:      c.Event.Livemode,
		Created:       c.Event.Created,
		ReceivedAt:    c.At,
		EnqueuedAt:    c.At,
		PayloadSHA256: c.PayloadSHA256(),
		ExpiresAt:     c.At.Add(c.TTL),
		Subjects:      subjectList(c.Subjects),
	})
	if packed != nil {
		it.Payload = c.Event.Raw
	}
	if c.External() {
		it.PayloadObject = BodyObject(it.Key, it.PayloadSHA256)
	}
	return it, packed
}

// External reports whether the payload is too large for a payload item
// (over MaxPayloadBytes), so it is kept as an S3 object the claim names.
// Such a payload is written after its claim is won, never beside it: a
// duplicate writes nothing.
func (c Claim) External() bool { return len(c.Event.Raw) > MaxPayloadBytes }

// PayloadItem returns what PutPayload needs of the item the claim
// writes (Key, ReceivedAt, ExpiresAt), without hashing the payload as
// NewItem does, so the payload write can start beside the claim at no
// extra cost.
func (c Claim) PayloadItem() Item {
	it := normalize(Item{Key: c.Event.Key(), ReceivedAt: c.At, ExpiresAt: c.At.Add(c.TTL)})
	if c.External() {
		it.PayloadSHA256 = c.PayloadSHA256()
		it.PayloadObject = BodyObject(it.Key, it.PayloadSHA256)
	}
	return it
}

// normalize returns it with its times in UTC at the precision the table
// stores them: seconds for created and expires_at, milliseconds for the
// times the store compares, nanoseconds for received_at and processed_at.
func normalize(it Item) Item {
	it.Created = it.Created.UTC().Truncate(time.Second)
	it.ExpiresAt = it.ExpiresAt.UTC().Truncate(time.Second)
	it.ReceivedAt = utc(it.ReceivedAt)
	it.ProcessedAt = utc(it.ProcessedAt)
	it.RemovedAt = utc(it.RemovedAt)
	it.EnqueuedAt = utc(it.EnqueuedAt).Truncate(time.Millisecond)
	it.LeaseUntil = utc(it.LeaseUntil).Truncate(time.Millisecond)
	it.RenewAfter = utc(it.RenewAfter).Truncate(time.Millisecond)
	return it
}

// subjectList returns hashes sorted, each once, as a status item holds
// them; nil for none.
func subjectList(hashes []string) []string {
	if len(hashes) == 0 {
		return nil
	}
	out := slices.Clone(hashes)
	slices.Sort(out)
	return slices.Compact(out)
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// PayloadSHA256 returns the hex sha256 of raw, as stored in payload_sha256.
func PayloadSHA256(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// ShardOf returns the shard of the pending index an unfinished event
// belongs to, in [0, PendingShards).
func ShardOf(key webhook.Key) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % PendingShards)
}

// pendingShard returns ShardOf(key) as the index stores it.
func pendingShard(key webhook.Key) string { return strconv.Itoa(ShardOf(key)) }

// DefaultTTL keeps items 35 days: longer than Stripe's 3-day retry window and
// the 30 days of its event list, which the reconciler reads.
const DefaultTTL = 35 * 24 * time.Hour

// MaxPayloadBytes is the largest raw payload the payload item holds:
// DynamoDB refuses items over 400 KB (409,600 bytes, attribute names
// included), and the payload item's other attributes (pk with the longest
// key, sk, received_at, expires_at and the names) take well under 1 KiB.
// 384 KiB leaves 16 KiB of room; the receiver's MAX_BODY_BYTES may not be
// larger (TestLargestPayloadFitsTheItem stores one on dynalite).
const MaxPayloadBytes = 384 << 10
