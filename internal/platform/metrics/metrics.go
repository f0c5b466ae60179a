// Package metrics writes hookinbox's metrics as CloudWatch embedded metric
// format (EMF) lines: one JSON object per line whose "_aws" member tells
// CloudWatch Logs which of the line's members are metrics, in what unit and
// under which dimensions. In Lambda the line goes to stdout, which Lambda
// ships to CloudWatch Logs, so publishing a metric costs no API call and
// cannot fail the work it measures.
//
// A Recorder encodes each line with encoding/json and hands it to its
// writer in one Write under a mutex, so lines never interleave. A nil
// *Recorder records nothing. A Recorder is safe for concurrent use.
package metrics

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"sync"
	"time"
	"unicode/utf8"
)

// Unit is a CloudWatch unit.
type Unit string

// The units hookinbox publishes in.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	Seconds      Unit = "Seconds"
)

// Metric names. The template's alarms and dashboard name them, and the
// template test checks that every metric they name is one of these.
const (
	// Receiver.
	Received     = "Received"     // verified deliveries, duplicates included
	Duplicate    = "Duplicate"    // verified deliveries of an event already claimed
	VerifyFailed = "VerifyFailed" // requests refused before a claim, by Reason
	IntakeErrors = "IntakeErrors" // verified deliveries answered 5xx (claim or send failed)
	Busy         = "Busy"         // verified deliveries answered 503 because the event's previous fetch runs (id-only providers)
	Enqueued     = "Enqueued"     // messages sent to the events queue by the intake (receiver and reconciler)

	// Processor.
	Processed      = "Processed"      // events that reached DONE
	Ignored        = "Ignored"        // events with no handler (IGNORED)
	OtherMode      = "OtherMode"      // events of the other mode (test-mode on a live deployment), IGNORED
	Failed         = "Failed"         // attempts that failed transiently and will be retried
	Parked         = "Parked"         // events parked in the DLQ (DEAD)
	LeaseTakeovers = "LeaseTakeovers" // leases taken from a worker whose lease had run out
	EffectDuration = "EffectDuration" // one effect's run, by Effect (milliseconds)
	EndToEndAge    = "EndToEndAge"    // from the provider's creation of the event to DONE (seconds)

	// StripeEventsNotGenerated counts Stripe's reports that it could not
	// create some events (v2.core.health.event_generation_failure.resolved).
	StripeEventsNotGenerated = "StripeEventsNotGenerated"

	// Destinations (Dims.Destination): each delivery attempt counts once.
	DestinationDelivered = "DestinationDelivered" // deliveries a destination accepted (2xx, put on the bus)
	DestinationRetried   = "DestinationRetried"   // deliveries that failed and will be retried (408, 429, 5xx, timeout, no connection)
	DestinationParked    = "DestinationParked"    // deliveries that parked their event (refused, gone, too large, or out of retries)
	DestinationGone      = "DestinationGone"      // deliveries answered 410 Gone (also counted in DestinationParked)
	DestinationBusy      = "DestinationBusy"      // deliveries not tried: the destination's concurrency limit was reached
	DestinationLatency   = "DestinationLatency"   // one delivery's round trip (milliseconds)

	// Replay.
	Replayed = "Replayed" // events sent back to the processor

	// Reconciler.
	StuckClaims     = "StuckClaims"     // claims stuck in RECEIVED or FAILED, plus overdue leases, per run
	Reconciled      = "Reconciled"      // stuck claims re-enqueued; by provider, the claims the reconciler made from its API
	OverdueLeases   = "OverdueLeases"   // PROCESSING long after the lease ended
	Missed          = "Missed"          // provider events that never arrived as webhooks, claimed now
	Skipped         = "Skipped"         // provider events given up on after failing in 3 reconciler runs, recorded
	ReconcileErrors = "ReconcileErrors" // failures in a run (each also fails the invocation)
	CheckpointLag   = "CheckpointLag"   // how far the provider checkpoint is behind now (seconds)
)

// Names lists every metric name above with its unit.
var Names = map[string]Unit{
	Received: Count, Duplicate: Count, VerifyFailed: Count, IntakeErrors: Count, Busy: Count, Enqueued: Count,
	Processed: Count, Ignored: Count, Failed: Count, Parked: Count, LeaseTakeovers: Count, OtherMode: Count,
	EffectDuration: Milliseconds, EndToEndAge: Seconds, StripeEventsNotGenerated: Count,
	DestinationDelivered: Count, DestinationRetried: Count, DestinationParked: Count, DestinationGone: Count,
	DestinationBusy: Count, DestinationLatency: Milliseconds,
	Replayed:    Count,
	StuckClaims: Count, Reconciled: Count, OverdueLeases: Count, Missed: Count, Skipped: Count, ReconcileErrors: Count,
	CheckpointLag: Seconds,
}

// Dimension names.
const (
	DimProvider  = "Provider"
	DimEventType = "EventType"
	DimReason    = "Reason"
	DimEffect    = "Effect"
	// DimDestination names a destination (internal/destination); its
	// values come from the deployment's configuration.
	DimDestination = "Destination"
)

// OtherEventType is the EventType dimension of every event whose type a
// Recorder made with WithEventTypes does not name.
const OtherEventType = "other"

// Dims are the dimension values of one line; an empty field is no
// dimension. Every line publishes its metrics without dimensions (what the
// alarms watch), by Reason, Effect and Destination each alone when set,
// and by all the set fields together (Provider, EventType, Reason,
// Effect, Destination in that order). Values come from verified events or from fixed sets, never from
// an unverified request: every value is a custom metric that costs money.
// A verified event's type is not enough where the signature does not
// cover it (GitHub's and Shopify's are headers): a function bounds its
// EventType values with WithEventTypes.
type Dims struct {
	Provider  string
	EventType string
	Reason    string
	Effect    string
	// Destination is published alone and with the others: a
	// destination's alarms watch it alone.
	Destination string
}

// Metric is one value of a line.
type Metric struct {
	Name  string
	Unit  Unit
	Value float64
}

// Counted returns a Count metric.
func Counted(name string, n int) Metric { return Metric{Name: name, Unit: Count, Value: float64(n)} }

// Millis returns a duration metric in milliseconds.
func Millis(name string, d time.Duration) Metric {
	return Metric{Name: name, Unit: Milliseconds, Value: float64(d) / float64(time.Millisecond)}
}

// Secs returns a duration metric in seconds.
func Secs(name string, d time.Duration) Metric {
	return Metric{Name: name, Unit: Seconds, Value: d.Seconds()}
}

// MaxDimLen is the longest dimension value written, in bytes; longer
// values are cut (CloudWatch allows 1024).
const MaxDimLen = 128

// Recorder writes EMF lines.
type Recorder struct {
	w          io.Writer
	namespace  string
	now        func() time.Time
	eventTypes func(provider, eventType string) bool // nil: every type
	mu         sync.Mutex
}

// New returns a Recorder that writes lines to w under the CloudWatch
// namespace.
func New(w io.Writer, namespace string) *Recorder {
	return &Recorder{w: w, namespace: namespace, now: time.Now}
}

// WithEventTypes returns r with its EventType dimension bounded: a type
// for which known(provider, type) is false is written as OtherEventType,
// so a type the sender chose cannot mint a new metric. Call it before r
// is used.
func (r *Recorder) WithEventTypes(known func(provider, eventType string) bool) *Recorder {
	r.eventTypes = known
	return r
}

// bound returns d with its EventType within the set r publishes.
func (r *Recorder) bound(d Dims) Dims {
	if d.EventType != "" && r.eventTypes != nil && !r.eventTypes(d.Provider, d.EventType) {
		d.EventType = OtherEventType
	}
	return d
}

// Emit writes one line carrying ms under the dimensions d. Metrics whose
// value is not a finite number are left out. A write error is dropped:
// a metric never fails the work it measures.
func (r *Recorder) Emit(d Dims, ms ...Metric) {
	if r == nil || len(ms) == 0 {
		return
	}
	d = r.bound(d)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.write(d, ms, nil)
}

// emfDirective is the "_aws" member of a line, as CloudWatch reads it.
type emfDirective struct {
	Timestamp         int64
	CloudWatchMetrics []emfMetrics
}

type emfMetrics struct {
	Namespace  string
	Dimensions [][]string
	Metrics    []emfMetric
}

type emfMetric struct {
	Name string
	Unit Unit
}

// write encodes one line and writes it; r.mu is held. A line with no
// finite metric is not written.
func (r *Recorder) write(d Dims, ms []Metric, fields []Field) {
	line := make(map[string]any, 1+4+len(ms)+len(fields))
	var names []emfMetric
	for _, m := range ms {
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			continue
		}
		names = append(names, emfMetric{Name: m.Name, Unit: m.Unit})
		line[m.Name] = m.Value
	}
	if len(names) == 0 {
		return
	}
	for _, kv := range d.pairs() {
		if kv[1] != "" {
			line[kv[0]] = cutDim(kv[1])
		}
	}
	for _, f := range fields {
		line[f.key] = f.value
	}
	line["_aws"] = emfDirective{
		Timestamp: r.now().UnixMilli(),
		CloudWatchMetrics: []emfMetrics{{
			Namespace:  r.namespace,
			Dimensions: dimensionSets(d),
			Metrics:    names,
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return // every value above is a string, a bool or a finite number
	}
	_, _ = r.w.Write(append(b, '\n'))
}

// Field is a member an EMF line carries beside its metrics and
// dimensions: CloudWatch Logs keeps it with the line (Logs Insights reads
// it), CloudWatch publishes nothing from it.
type Field struct {
	key   string
	value any
}

// String returns a string field.
func String(key, value string) Field { return Field{key: key, value: value} }

// Bool returns a boolean field.
func Bool(key string, value bool) Field { return Field{key: key, value: value} }

// Batch holds the metrics recorded with a context made by WithBatch until
// Flush writes them: one line per set of dimensions, with the metrics of
// the same name added up, so an invocation whose metrics share their
// dimensions (a webhook's Received and Enqueued) writes one line instead
// of one per metric, and that line can carry the invocation's log fields.
// A Batch is safe for concurrent use.
type Batch struct {
	mu      sync.Mutex
	entries []batchEntry
}

type batchEntry struct {
	d  Dims
	ms []Metric
}

type batchKey struct{}

// WithBatch returns ctx carrying a new Batch, which EmitContext fills.
func WithBatch(ctx context.Context) (context.Context, *Batch) {
	b := &Batch{}
	return context.WithValue(ctx, batchKey{}, b), b
}

// EmitContext adds ms under d to ctx's Batch when it carries one, and
// otherwise writes them as Emit does.
func (r *Recorder) EmitContext(ctx context.Context, d Dims, ms ...Metric) {
	if r == nil || len(ms) == 0 {
		return
	}
	b, ok := ctx.Value(batchKey{}).(*Batch)
	if !ok {
		r.Emit(d, ms...)
		return
	}
	d = r.bound(d)
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.entries {
		if e := &b.entries[i]; e.d == d {
			e.ms = addMetrics(e.ms, ms)
			return
		}
	}
	b.entries = append(b.entries, batchEntry{d: d, ms: addMetrics(nil, ms)})
}

// addMetrics adds ms to to, summing the values of a name already there.
func addMetrics(to, ms []Metric) []Metric {
next:
	for _, m := range ms {
		for i := range to {
			if to[i].Name == m.Name && to[i].Unit == m.Unit {
				to[i].Value += m.Value
				continue next
			}
		}
		to = append(to, m)
	}
	return to
}

// Flush writes what b holds, in the order its dimensions were first
// recorded, fields on the first line, and empties it. With nothing held
// and fields given, it writes nothing: fields ride only with metrics.
func (r *Recorder) Flush(b *Batch, fields ...Field) {
	if r == nil || b == nil {
		return
	}
	b.mu.Lock()
	entries := b.entries
	b.entries = nil
	b.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, e := range entries {
		if i > 0 {
			fields = nil
		}
		r.write(e.d, e.ms, fields)
	}
}

// dimensionSets returns the line's dimension sets: the empty one, Reason
// alone and Effect alone when set beside another dimension, and all the
// set dimensions together.
func dimensionSets(d Dims) [][]string {
	sets := [][]string{{}}
	var all []string
	for _, kv := range d.pairs() {
		if kv[1] != "" {
			all = append(all, kv[0])
		}
	}
	if d.Reason != "" && len(all) > 1 {
		sets = append(sets, []string{DimReason})
	}
	if d.Effect != "" && len(all) > 1 {
		sets = append(sets, []string{DimEffect})
	}
	if d.Destination != "" && len(all) > 1 {
		sets = append(sets, []string{DimDestination})
	}
	if len(all) > 0 {
		sets = append(sets, all)
	}
	return sets
}

// pairs returns d's dimension names and values, in the order lines
// list them.
func (d Dims) pairs() [5][2]string {
	return [5][2]string{{DimProvider, d.Provider}, {DimEventType, d.EventType}, {DimReason, d.Reason}, {DimEffect, d.Effect}, {DimDestination, d.Destination}}
}

// cutDim cuts a dimension value to at most MaxDimLen bytes of valid UTF-8.
func cutDim(value string) string {
	if len(value) > MaxDimLen {
		value = value[:MaxDimLen]
		for !utf8.ValidString(value) {
			value = value[:len(value)-1]
		}
	}
	return value
}
