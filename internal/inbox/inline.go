package inbox

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/hookinbox/hookinbox/webhook"
)

// An event whose payload is small travels in one item: the claim carries
// the payload as raw DEFLATE (compress/flate at flate.BestSpeed) when that
// costs no more write units than keeping the payload apart, and a new event is then one
// PutItem instead of a claim and a payload write, and its processing one
// read fewer.
//
// The cost rule: an event's status item is written three times in its
// life (claim, lease, finish), each billed on the whole item, a write
// unit a kilobyte (inlineItemBytes); a payload kept apart costs a status
// item of one unit three times plus the payload item's units once. So
// the claim may carry the payload when the status item, with room for
// every attribute a later state adds, stays within inlineUnits: one unit
// for a payload under about 2 KiB (a 1 KiB event costs 1 unit a write,
// as an event without a payload), two for 2-5 KiB (a Stripe checkout:
// 3 × 2 = 6 units, as 3 × 1 + 3 apart). The pending index projects no
// payload (PendingAttributes), so its entries cost one unit either way. A
// payload over InlineMaxRaw keeps its own item (sk "payload"), written
// once beside the claim, and every state change costs one unit.
//
// The choice depends only on the event (its key, type and raw bytes), never
// on the clock, so every delivery of an event makes the same choice.

// inlineItemBytes is what one write unit covers, as DynamoDB sizes items
// (attribute names plus values).
const inlineItemBytes = 1024

// InlineMaxRaw is the longest raw payload that may ride in a claim item
// (an inline payload is never longer once inflated). Above it every state
// change stays one write unit, however large the payload.
const InlineMaxRaw = 8 << 10

// inlineUnits is how many write units each write of a status item
// carrying a raw payload of n bytes under key may cost: as many as keep
// its three writes within three one-unit writes plus the payload item's
// (counted at its smallest, so the rule errs towards keeping it apart).
func inlineUnits(key webhook.Key, n int) int {
	payloadItem := len("pk") + len(key) + len("sk") + len(SortPayload) + len("payload") + n +
		len("received_at") + len("2006-01-02T15:04:05Z") + len("expires_at") + 7
	units := (payloadItem + inlineItemBytes - 1) / inlineItemBytes
	return 1 + units/3
}

// inlineMaxRatio bounds the work spent on payloads that cannot fit: a
// payload is compressed only if it would fit at this ratio. Provider JSON
// of half a kilobyte or more compresses 1.8-3.6× at flate.BestSpeed
// (testdata/: GitHub, Shopify and Adyen about 2×, Stripe more), so a payload that would need more than 4× is not
// compressed at all.
const inlineMaxRatio = 4

// inlineHeadroom is what a claim item leaves under its units for the
// attributes later states add: a lease (lease_owner and taken_from of up
// to 64 bytes each, lease_until, PROCESSING), or a finish (outcome,
// processed_at, taken_from) and a short last_error. A longer last_error
// makes the changes of a failing event cost two units until it is done.
const inlineHeadroom = 256

// subjectsRoom is what a claim item leaves under its units for its
// subjects (Claim.Subjects, 32 bytes each as stored): room for two, a
// checkout's customer and email. It is counted whatever the subjects, so
// the choice does not depend on them (nor on the subject key, nor on an
// unsigned header); an event that names more (a Shopify order: its
// customer, email and shop) costs a unit more a write when that crosses
// a unit, until the processor has indexed them.
const subjectsRoom = len(attrSubjects) + 2*sha256.Size

// attrPayloadDeflate is the status item's attribute holding an inline
// payload, compressed.
const attrPayloadDeflate = "payload_deflate"

// Prepared returns c with its payload's inline form and hash computed
// once: the compressed bytes when they fit, so Inline, NewItem and a
// store's Claim do not compress again, and PayloadSHA256, which the item
// stores and a duplicate compares, so no one hashes the payload twice. A
// Claim that was not prepared computes them when asked.
func (c Claim) Prepared() Claim {
	c.packed, c.sum, c.prepared = c.pack(), PayloadSHA256(c.Event.Raw), true
	return c
}

// Inline reports whether the claim item carries the payload, so no payload
// item needs to be written.
func (c Claim) Inline() bool {
	if c.prepared {
		return c.packed != nil
	}
	return c.pack() != nil
}

// packedPayload returns the payload compressed when it goes inline, or nil.
func (c Claim) packedPayload() []byte {
	if c.prepared {
		return c.packed
	}
	return c.pack()
}

// pack compresses the payload and returns it if the claim item with it
// fits, or nil.
func (c Claim) pack() []byte {
	raw := c.Event.Raw
	if len(raw) == 0 || len(raw) > InlineMaxRaw {
		return nil
	}
	key := c.Event.Key()
	budget := inlineUnits(key, len(raw))*inlineItemBytes - inlineHeadroom - subjectsRoom
	// The status item without the payload is at least 200 bytes (its
	// attribute names, the hash and the times alone are more): a payload
	// over 4× the rest of the budget cannot fit (checked before the
	// item's size is counted, which costs a few allocations).
	if len(raw) > inlineMaxRatio*(budget-200) {
		return nil
	}
	it := Item{
		Key: key, Status: Received, Provider: c.Event.Provider, EventType: c.Event.Type,
		PayloadSHA256: "0000000000000000000000000000000000000000000000000000000000000000",
		Created:       c.Event.Created, ReceivedAt: c.At, EnqueuedAt: c.At, ExpiresAt: c.At.Add(c.TTL),
	}
	room := budget - itemBytes(it, 0)
	if room <= 0 || len(raw) > inlineMaxRatio*room {
		return nil
	}
	packed, ok := deflate(raw, room)
	if !ok {
		return nil
	}
	return packed
}

// itemBytes is the size of marshal(it), plus packed bytes of inline
// payload, as DynamoDB sizes an item: each attribute's name plus its value
// (a string's or binary's bytes; a number's significant digits, about one
// byte per two, plus up to two; a boolean one byte). Numbers are counted
// at their largest.
func itemBytes(it Item, packed int) int {
	n := 0
	s := func(name, v string) { n += len(name) + len(v) }
	num := func(name string, v int64) { n += len(name) + (len(strconv.FormatInt(v, 10))+1)/2 + 2 }
	s("pk", string(it.Key))
	s("sk", SortEvent)
	s("status", string(it.Status))
	s("provider", it.Provider)
	s("event_type", it.EventType)
	n += len("livemode") + 1
	num("created", it.Created.Unix())
	s("received_at", formatTime(it.ReceivedAt))
	num("enqueued_at", it.EnqueuedAt.UnixMilli())
	s("payload_sha256", it.PayloadSHA256)
	num("expires_at", it.ExpiresAt.Unix())
	num("attempts", int64(it.Attempts))
	if !it.Status.Final() {
		s("pending", pendingShard(it.Key))
	}
	if packed > 0 {
		n += len(attrPayloadDeflate) + packed
	}
	if len(it.Subjects) > 0 {
		n += len(attrSubjects) + sha256.Size*len(it.Subjects)
	}
	return n
}

// flateWriters reuses compressors: a new flate.Writer allocates about a
// megabyte of tables.
var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed) // the level is valid: never an error
	return w
}}

// flateReaders reuses decompressors and their 32 KiB windows.
var flateReaders = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

// errTooBig stops a compression whose output passed its limit.
var errTooBig = fmt.Errorf("compressed payload over its limit")

// limitBuffer is a bytes.Buffer that refuses to grow past limit.
type limitBuffer struct {
	bytes.Buffer
	limit int
}

func (b *limitBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, errTooBig
	}
	return b.Buffer.Write(p)
}

// deflate compresses raw at flate.BestSpeed into at most limit bytes.
func deflate(raw []byte, limit int) ([]byte, bool) {
	buf := &limitBuffer{limit: limit}
	buf.Grow(min(limit, len(raw)))
	w := flateWriters.Get().(*flate.Writer)
	w.Reset(buf)
	_, err := w.Write(raw)
	if err == nil {
		err = w.Close()
	}
	w.Reset(nil)
	flateWriters.Put(w)
	if err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// inflate decompresses an inline payload.
func inflate(packed []byte) ([]byte, error) {
	r := flateReaders.Get().(io.ReadCloser)
	defer flateReaders.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(packed), nil); err != nil {
		return nil, fmt.Errorf("inline payload: %w", err)
	}
	out := bytes.NewBuffer(make([]byte, 0, 4*len(packed)))
	// An inline payload is at most InlineMaxRaw long; read one byte more
	// to notice a corrupt one.
	if _, err := io.Copy(out, io.LimitReader(r, InlineMaxRaw+1)); err != nil {
		return nil, fmt.Errorf("inline payload: %w", err)
	}
	if out.Len() > InlineMaxRaw {
		return nil, fmt.Errorf("inline payload: longer than %d bytes", InlineMaxRaw)
	}
	return out.Bytes(), nil
}
