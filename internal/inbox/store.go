package inbox

import (
	"context"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// Store is the contract both implementations keep, written down once so the
// conformance suite in inboxtest can hold them to it. Consumers declare the
// smaller interfaces they need.
type Store interface {
	// Claim writes the status item for a new event, in RECEIVED, only if no
	// item exists for its key. When c.Inline the item carries the payload
	// (Item.Payload), in the same write; otherwise the caller stores it
	// with PutPayload. A duplicate returns ErrAlreadyClaimed together
	// with the stored item, so the caller can tell what state it is in.
	// An IDOnly event (a notification whose state the processor fetches)
	// also claims a key whose item is DONE or IGNORED, replacing it with a
	// new RECEIVED item: at most one fetch is pending per id, and a
	// notification after the last one finished is fetched again, unless
	// that one finished with a RenewAfter later than c.At: until then a
	// notification is a duplicate (the provider did not know the object).
	Claim(ctx context.Context, c Claim) (Item, error)
	// PutPayload stores raw as the payload of the claim it (its Key,
	// ReceivedAt and ExpiresAt), in one write that needs no claim to exist
	// yet, so it can run together with Claim. A payload already stored
	// keeps its bytes (the first stored wins). A payload over MaxPayloadBytes is kept as
	// an object (BodyObject): the one the claim names when raw is the
	// claim's bytes; other bytes get their own, which the status item
	// names from then on. A payload removed on purpose stays removed.
	PutPayload(ctx context.Context, it Item, raw []byte) error
	// Payload returns the stored raw payload, inline in the status item
	// (which wins) or in its own item, or ErrNotFound.
	Payload(ctx context.Context, key webhook.Key) ([]byte, error)
	// Get returns the status item, or ErrNotFound.
	Get(ctx context.Context, key webhook.Key) (Item, error)
	// MarkEnqueued records that a message is being sent again for an event in
	// one of the statuses (RECEIVED when none are given) whose last message
	// went out at or before cutoff. Otherwise ErrNotDue (or ErrNotFound).
	MarkEnqueued(ctx context.Context, key webhook.Key, cutoff, now time.Time, statuses ...Status) (Item, error)
	// Lease moves an event from RECEIVED, FAILED or DEAD, or from
	// PROCESSING whose lease ended before now, to PROCESSING owned by owner
	// until now+d, counts the attempt and clears the previous outcome. DONE
	// or IGNORED gives ErrFinished; a live lease held by someone else gives
	// ErrLeaseHeld; a refusal the stored item does not explain (another
	// worker changed it in between) gives ErrLeaseRaced. DEAD is taken because a message for a parked event
	// means a person sent it back (SQS's DLQ redrive cannot mark it); its
	// attempts and InfraFailures then start afresh, as after Requeue.
	Lease(ctx context.Context, key webhook.Key, owner string, now time.Time, d time.Duration) (Item, error)
	// Finish writes the outcome of a lease, only if owner still holds it;
	// otherwise ErrLeaseLost.
	Finish(ctx context.Context, key webhook.Key, owner string, r Result) (Item, error)
	// EndHold lets the next IDOnly claim of an IGNORED event through at
	// once, ending the hold its RenewAfter set: the provider knows the
	// object now. An event in another status gives ErrNotHeld, no event
	// ErrNotFound; nothing is written then.
	EndHold(ctx context.Context, key webhook.Key) error
	// Requeue puts an event that is not DONE and not under a live lease back
	// to FAILED, keeping its last error, so a processor takes it again. Its
	// attempts and InfraFailures start afresh: a replay follows a fix, and
	// must not be parked by the counts of the failures before it. A DONE
	// event gives ErrFinished.
	Requeue(ctx context.Context, key webhook.Key, now time.Time) (Item, error)
	// Pending returns up to limit unfinished events (RECEIVED, PROCESSING,
	// FAILED) whose last activity was before cutoff, oldest first, without
	// scanning the table. With a limit it reads the shards in order and
	// stops when the limit is reached, so it suits small listings; the
	// reconciler reads shard by shard with PendingShard. A listed item
	// carries only what the pending index projects (PendingAttributes:
	// the key, status, provider, type and times, never the payload): read
	// it with Get for the rest.
	Pending(ctx context.Context, cutoff time.Time, limit int) ([]Item, error)
	// PendingShard returns up to limit (0: all) unfinished events of one
	// shard of the pending index (0 ≤ shard < PendingShards) whose last
	// activity was before cutoff, oldest first, as Pending lists them.
	PendingShard(ctx context.Context, shard int, cutoff time.Time, limit int) ([]Item, error)

	// IndexSubjects records that the event key is about each of hashes
	// (keyed hashes of its subjects, never the subjects) until expiresAt,
	// the event's expiry. Writing the same again changes nothing.
	IndexSubjects(ctx context.Context, key webhook.Key, hashes []string, expiresAt time.Time) error
	// SubjectEvents lists the events about any of hashes, up to limit a
	// call, without scanning the table: from cursor ("" at first) it
	// returns the next keys and the cursor to go on from, "" once every
	// event is listed. First come the unfinished events whose claim
	// names one of hashes and whose index entries are not written yet
	// (Item.Subjects), then the index of each hash in turn. A call may
	// return no keys and a cursor; a key may come more than once. An
	// event claimed after the listing began may be left out.
	SubjectEvents(ctx context.Context, hashes []string, cursor string, limit int) ([]webhook.Key, string, error)
	// About reports whether the event key is about any of hashes: its
	// claim names one (not indexed yet), or the index has it under one.
	// The claim is read first: the processor writes the index before it
	// drops the claim's subjects, so an event is never missed between.
	About(ctx context.Context, key webhook.Key, hashes []string) (bool, error)
	// Footprint says what is stored of an event, or ErrNotFound.
	Footprint(ctx context.Context, key webhook.Key) (Footprint, error)
	// RemovePayload removes every stored copy of a finished (DONE or
	// IGNORED) event's payload (inline, payload item, S3 object) and,
	// when why is RemovedErased, the results of its finished effects, and
	// marks the status item (Item.PayloadRemoved): the item itself stays,
	// and a payload delivered again is not stored (PutPayload stores
	// nothing). It returns what it removed; doing it again writes nothing,
	// and the first removal's reason and time stay. An unfinished event
	// (its lease live or not) keeps its payload: RemovedErased marks it
	// (Item.EraseWhenFinished; Footprint.Marked when this call did), so
	// that it is erased once it finishes (FinishedToErase), and
	// RemovedExpired gives ErrClaimChanged.
	RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (Footprint, error)
	// Retained returns up to limit events finished DONE or IGNORED before
	// cutoff whose payload is still stored, without scanning the table;
	// an event marked to erase is not among them.
	Retained(ctx context.Context, cutoff time.Time, limit int) ([]webhook.Key, error)
	// FinishedToErase returns up to limit events marked to erase when
	// finished (Item.EraseWhenFinished) that are finished, without
	// scanning the table.
	FinishedToErase(ctx context.Context, limit int) ([]webhook.Key, error)
	// RecordErasure keeps the audit record of an erasure (the same At and
	// SubjectHash again replaces it); Erasures lists them, oldest first.
	RecordErasure(ctx context.Context, e Erasure) error
	Erasures(ctx context.Context) ([]Erasure, error)
	// ErasureProgress returns the progress of the erasure the event key
	// asked for, or the zero Progress; SaveErasureProgress replaces it.
	ErasureProgress(ctx context.Context, key webhook.Key) (Progress, error)
	SaveErasureProgress(ctx context.Context, key webhook.Key, p Progress) error
	// RecordDataRequest keeps the record of a data request (the same At
	// and By again replaces it); DataRequests lists them, oldest first.
	RecordDataRequest(ctx context.Context, r DataRequest) error
	DataRequests(ctx context.Context) ([]DataRequest, error)
}

// Result is how a lease ended.
type Result struct {
	Status  Status // DONE, FAILED, DEAD or IGNORED
	Outcome string // short, PII-free summary of what happened
	Error   string // the reason, for FAILED and DEAD
	At      time.Time
	// RenewAfter, with a final Status, holds off IDOnly claims of the
	// event until then (see Store.Claim); zero allows them at once.
	RenewAfter time.Time
	// Infrastructure marks an attempt that failed because the
	// infrastructure was unavailable, not the business: Finish counts it
	// in Item.InfraFailures.
	Infrastructure bool
	// Uncounted marks an attempt that tried nothing (every destination it
	// had left was busy): Finish takes back the attempt Lease counted.
	Uncounted bool
	// Indexed says the event's subjects (Item.Subjects) are indexed
	// (IndexSubjects): Finish drops them from the status item.
	Indexed bool
}
