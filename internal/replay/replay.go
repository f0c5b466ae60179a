package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// Request is what to replay: the DLQ (All, optionally only EventType
// and only Reason, at most Max messages) or the events named in Keys,
// whether or not they are still in the DLQ. DryRun only reports. It is
// the dlq-replay function's input, e.g. {"all": true, "max": 100} or
// {"keys": ["stripe#evt_123"]}.
type Request struct {
	All       bool     `json:"all,omitempty"`
	Max       int      `json:"max,omitempty"`
	Keys      []string `json:"keys,omitempty"`
	EventType string   `json:"eventType,omitempty"`
	// Reason keeps only the DLQ messages parked with exactly this reason
	// (their error_reason attribute), a line break matching CRLF, CR or
	// LF: a browser sends a form's line breaks as CRLF.
	Reason string `json:"reason,omitempty"`
	DryRun bool   `json:"dryRun,omitempty"`
}

// maxKeys is the most keys one request may name.
const maxKeys = 1000

// Validate reports every problem of the request in one error.
func (r Request) Validate() error {
	var problems []string
	switch {
	case r.All && len(r.Keys) > 0:
		problems = append(problems, `give either "all": true or "keys", not both`)
	case !r.All && len(r.Keys) == 0:
		problems = append(problems, `say what to replay: "all": true (the DLQ, optionally with "eventType") or "keys": ["<provider>#<event id>"]`)
	}
	if r.EventType != "" && !r.All {
		problems = append(problems, `"eventType" filters the DLQ: use it with "all": true`)
	}
	if r.Reason != "" && !r.All {
		problems = append(problems, `"reason" filters the DLQ: use it with "all": true`)
	}
	if r.Max < 0 {
		problems = append(problems, `"max" must not be negative`)
	}
	if len(r.Keys) > maxKeys {
		problems = append(problems, fmt.Sprintf(`%d keys, more than %d`, len(r.Keys), maxKeys))
	}
	for _, k := range r.Keys {
		if _, err := webhook.ParseKey(k); err != nil {
			problems = append(problems, fmt.Sprintf("key %q is not <provider>#<event id>", k))
		}
	}
	if len(problems) > 0 {
		return errors.New("replay request: " + strings.Join(problems, "; "))
	}
	return nil
}

// Outcomes of one event or message, as reported in Line.Outcome.
const (
	Replayed    = "replayed"     // claim requeued, message sent (and its DLQ copy deleted)
	WouldReplay = "would replay" // the same, in a dry run
	dropped     = "dropped"      // DLQ message of an event already DONE (or a copy parked before this run sent it again), deleted
	wouldDrop   = "would drop"   // the same, in a dry run
	Skipped     = "skipped"      // left as it is; Note says why
	failed      = "failed"       // could not be replayed; Note says why; left in the DLQ
)

// Line is what happened to one event or DLQ message.
type Line struct {
	Key       string `json:"key,omitempty"`
	MessageID string `json:"messageId,omitempty"` // the DLQ message, in a DLQ replay
	Outcome   string `json:"outcome"`
	Status    string `json:"status,omitempty"`   // the inbox status found
	Attempts  int    `json:"attempts,omitempty"` // processing attempts so far
	Reason    string `json:"reason,omitempty"`   // why it was parked (the DLQ's error_reason, or last_error)
	Note      string `json:"note,omitempty"`     // why it was skipped, dropped or failed
}

// Summary is the result of a replay: counts, then a line per event.
type Summary struct {
	Source    string `json:"source"` // "dlq" or "keys"
	DryRun    bool   `json:"dryRun"`
	Moved     int    `json:"moved"` // replayed, or would be in a dry run
	Dropped   int    `json:"dropped"`
	Skipped   int    `json:"skipped"`
	Failed    int    `json:"failed"`
	Unmatched int    `json:"unmatched,omitempty"` // DLQ messages of other event types, left in the DLQ
	Stopped   string `json:"stopped,omitempty"`   // why a DLQ replay stopped before the DLQ was empty
	Events    []Line `json:"events"`
}

func (s *Summary) add(l Line) {
	switch l.Outcome {
	case Replayed, WouldReplay:
		s.Moved++
	case dropped, wouldDrop:
		s.Dropped++
	case Skipped:
		s.Skipped++
	case failed:
		s.Failed++
	}
	s.Events = append(s.Events, l)
}

// Text returns the summary as lines for a terminal or a log.
func (s Summary) Text() string {
	var b strings.Builder
	what := "DLQ replay"
	if s.Source == "keys" {
		what = "replay by key"
	}
	if s.DryRun {
		what += " (dry run: nothing changed)"
	}
	moved := "moved"
	if s.DryRun {
		moved = "to move"
	}
	fmt.Fprintf(&b, "%s: %d %s, %d dropped, %d skipped, %d failed", what, s.Moved, moved, s.Dropped, s.Skipped, s.Failed)
	if s.Unmatched > 0 {
		fmt.Fprintf(&b, ", %d other types left in the DLQ", s.Unmatched)
	}
	b.WriteString("\n")
	if s.Stopped != "" {
		fmt.Fprintf(&b, "stopped early: %s\n", s.Stopped)
	}
	for _, l := range s.Events {
		id := l.Key
		if id == "" {
			id = "message " + l.MessageID
		}
		fmt.Fprintf(&b, "  %-12s %s", l.Outcome, id)
		if l.Status != "" {
			fmt.Fprintf(&b, "  [%s, %d attempts]", l.Status, l.Attempts)
		}
		if l.Reason != "" {
			fmt.Fprintf(&b, "  reason: %s", l.Reason)
		}
		if l.Note != "" {
			fmt.Fprintf(&b, "  (%s)", l.Note)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Config tunes a Handler; zero fields take their defaults.
type Config struct {
	// DefaultMax is how many DLQ messages a replay handles when the
	// request gives no max. Default 100.
	DefaultMax int
	// Wait is the long poll of each DLQ receive; the last, empty receive
	// waits this long. Default 1 s; a negative Wait does not long-poll.
	Wait time.Duration
	// Metrics records Replayed, by provider; nil records nothing.
	Metrics *metrics.Recorder
	// Progress, when set, is told each line as soon as it is known.
	Progress func(Line)
}

const (
	// visibility is how long a received DLQ message stays hidden while the
	// replay runs; it exceeds the run (the function's timeout).
	visibility = 3 * time.Minute
	// margin: the replay stops when its context's deadline is closer.
	margin = 10 * time.Second
)

func (c Config) withDefaults() Config {
	if c.DefaultMax <= 0 {
		c.DefaultMax = 100
	}
	if c.Wait < 0 {
		c.Wait = 0
	} else if c.Wait == 0 {
		c.Wait = time.Second
	}
	return c
}

// inboxStore lists the inbox calls a replay makes.
type inboxStore interface {
	Get(ctx context.Context, key webhook.Key) (inbox.Item, error)
	Payload(ctx context.Context, key webhook.Key) ([]byte, error)
	Requeue(ctx context.Context, key webhook.Key, now time.Time) (inbox.Item, error)
}

// sender sends envelopes to the events queue.
type sender interface {
	Send(ctx context.Context, env queue.Envelope) error
}

// deadLetters is the DLQ, read and emptied by a replay.
type deadLetters interface {
	Receive(ctx context.Context, max int, visibility, wait time.Duration) ([]queue.Message, error)
	Delete(ctx context.Context, receiptHandle string) error
	Release(ctx context.Context, receiptHandle string) error
}

// Handler replays events.
type Handler struct {
	cfg    Config
	store  inboxStore
	events sender
	dlq    deadLetters
	log    *slog.Logger
	mu     sync.Mutex // one DLQ replay at a time in this process
}

// New returns a Handler that requeues claims in store, sends to events and
// reads the DLQ dlq.
func New(cfg Config, store inboxStore, events sender, dlq deadLetters, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg.withDefaults(), store: store, events: events, dlq: dlq, log: log}
}

// count records the events replayed, one line per provider.
func (h *Handler) count(s Summary) {
	replayed := map[string]int{}
	for _, l := range s.Events {
		if l.Outcome == Replayed {
			replayed[webhook.Key(l.Key).Provider()]++
		}
	}
	for provider, n := range replayed {
		h.cfg.Metrics.Emit(metrics.Dims{Provider: provider}, metrics.Counted(metrics.Replayed, n))
	}
}

// Handle runs one replay and returns its summary. It returns an error only
// for a request it cannot run; what happened to each event, failures
// included, is in the summary.
func (h *Handler) Handle(ctx context.Context, req Request) (Summary, error) {
	if err := req.Validate(); err != nil {
		return Summary{}, err
	}
	var s Summary
	if req.All {
		s = h.fromDLQ(ctx, req)
	} else {
		s = h.byKey(ctx, req)
	}
	h.count(s)
	h.log.InfoContext(ctx, "replay finished", "source", s.Source, "dry_run", s.DryRun,
		"moved", s.Moved, "dropped", s.Dropped, "skipped", s.Skipped, "failed", s.Failed,
		"unmatched", s.Unmatched, "stopped", s.Stopped)
	return s, nil
}

// byKey replays the events named in req.Keys from their stored payloads.
func (h *Handler) byKey(ctx context.Context, req Request) Summary {
	s := Summary{Source: "keys", DryRun: req.DryRun, Events: []Line{}}
	seen := map[webhook.Key]bool{}
	for _, k := range req.Keys {
		key := webhook.Key(k)
		if seen[key] {
			continue
		}
		seen[key] = true
		l, _ := h.event(ctx, key, req.DryRun, false)
		h.logLine(ctx, l)
		s.add(l)
	}
	return s
}

// fromDLQ replays the DLQ's messages that match req, up to its max.
func (h *Handler) fromDLQ(ctx context.Context, req Request) Summary {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Summary{Source: "dlq", DryRun: req.DryRun, Events: []Line{}}
	max := req.Max
	if max == 0 {
		max = h.cfg.DefaultMax
	}
	var (
		held     []string                      // receipt handles to make visible again at the end
		received = map[string]bool{}           // message IDs seen, to notice a wrap-around
		replayed = map[webhook.Key]time.Time{} // events sent in this run → when
		handled  int
	)
	defer func() {
		// What stays in the DLQ becomes visible again now, not after the
		// visibility timeout. A failure here only delays it.
		for _, rh := range held {
			if err := h.dlq.Release(context.WithoutCancel(ctx), rh); err != nil {
				h.log.WarnContext(ctx, "could not make a DLQ message visible again; it will be after the visibility timeout", "reason", err.Error())
			}
		}
	}()
scan:
	for handled < max {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < margin {
			s.Stopped = "the function is about to time out; run the replay again for the rest"
			break
		}
		msgs, err := h.dlq.Receive(ctx, queue.MaxReceive, visibility, h.cfg.Wait)
		if err != nil {
			s.Stopped = "could not read the DLQ: " + err.Error()
			break
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if received[m.ID] {
				// The scan came round to a message it already holds (its
				// visibility ran out): everything has been seen.
				held = append(held, m.ReceiptHandle)
				s.Stopped = "came round to messages already seen; run the replay again for the rest"
				for _, rest := range msgs {
					if !received[rest.ID] {
						held = append(held, rest.ReceiptHandle)
					}
				}
				break scan
			}
			received[m.ID] = true
			if handled >= max {
				held = append(held, m.ReceiptHandle)
				continue
			}
			l, keep, counts := h.message(ctx, m, req, replayed)
			if l == nil {
				s.Unmatched++
			} else {
				h.logLine(ctx, *l)
				s.add(*l)
			}
			if counts {
				handled++
			}
			if keep {
				held = append(held, m.ReceiptHandle)
			}
		}
	}
	if handled >= max && s.Stopped == "" {
		s.Stopped = fmt.Sprintf("reached max %d; the DLQ may hold more", max)
	}
	return s
}

// message handles one DLQ message. It returns the line to report (nil for
// a message the filter leaves out), whether the message stays in the DLQ,
// and whether it counts towards the max.
//
// replayed holds the events this run has sent (or, in a dry run, would
// send), each with the time just before its claim was requeued. Another
// message for such an event is one of two things, told apart by when it
// was sent to the DLQ: a copy parked before the event was sent again,
// which that send supersedes (dropped), or the event parked again since,
// because it failed again (kept, with its new reason, for the next
// replay; replaying it again in this run would only repeat the failure).
func (h *Handler) message(ctx context.Context, m queue.Message, req Request, replayed map[webhook.Key]time.Time) (line *Line, keep, counts bool) {
	reason := m.Attributes[queue.AttrReason]
	ctx = queue.WithTrace(ctx, m.Trace) // the replayed event stays in its trace
	env, err := queue.ParseEnvelope(m.Body)
	if err != nil {
		// The processor parks what it cannot read as it is. Only a person
		// can say what it was; report it and leave it.
		return &Line{
			MessageID: m.ID, Outcome: Skipped, Reason: reason,
			Note: fmt.Sprintf("not an envelope (%d-byte body), left in the DLQ for a person: read it with aws sqs receive-message", len(m.Body)),
		}, true, false
	}
	if req.EventType != "" && env.Type != req.EventType || req.Reason != "" && !sameReason(reason, req.Reason) {
		return nil, true, false
	}
	if sentAt, done := replayed[env.Key]; done {
		if m.SentAt.IsZero() || !m.SentAt.Before(sentAt) {
			return &Line{
				Key: env.Key.String(), MessageID: m.ID, Outcome: Skipped, Reason: reason,
				Note: "parked again after this run replayed it; left in the DLQ: fix the cause, then replay it again",
			}, true, false
		}
		l := Line{Key: env.Key.String(), MessageID: m.ID, Reason: reason, Note: "a copy parked before this run replayed the event"}
		if req.DryRun {
			l.Outcome = wouldDrop
			return &l, true, true
		}
		if err := h.dlq.Delete(ctx, m.ReceiptHandle); err != nil {
			l.Outcome, l.Note = failed, "duplicate of a replayed message, but it could not be deleted: "+err.Error()
			return &l, true, true
		}
		l.Outcome = dropped
		return &l, false, true
	}
	// SQS stamps SentTimestamp in milliseconds: so is the replay's time,
	// so that a message parked in the same millisecond counts as later.
	at := time.Now().Truncate(time.Millisecond)
	l, sent := h.event(ctx, env.Key, req.DryRun, true)
	l.MessageID = m.ID
	if reason != "" {
		l.Reason = reason
	}
	if sent || l.Outcome == WouldReplay {
		replayed[env.Key] = at
	}
	if !sent && l.Outcome != dropped {
		return &l, true, true // skipped, failed, or a dry run: it stays
	}
	// Sent (or DONE): the DLQ copy goes, only now.
	if err := h.dlq.Delete(ctx, m.ReceiptHandle); err != nil {
		l.Note = joinNote(l.Note, "the DLQ copy could not be deleted ("+err.Error()+"); a later replay drops it")
		return &l, true, true
	}
	return &l, false, true
}

// event replays one event: requeue its claim, send its envelope. inDLQ
// says the event came from a DLQ message (a DONE event's message is then
// dropped). It reports whether the envelope was sent.
func (h *Handler) event(ctx context.Context, key webhook.Key, dryRun, inDLQ bool) (Line, bool) {
	l := Line{Key: key.String()}
	it, err := h.store.Get(ctx, key)
	switch {
	case errors.Is(err, inbox.ErrNotFound):
		l.Outcome, l.Note = Skipped, "no claim in the inbox (expired after its TTL, or never claimed); nothing to replay from"
		return l, false
	case err != nil:
		l.Outcome, l.Note = failed, err.Error()
		return l, false
	}
	l.Status, l.Attempts, l.Reason = string(it.Status), it.Attempts, it.LastError
	now := time.Now()
	switch {
	case it.Status == inbox.Done:
		return h.done(l, dryRun, inDLQ), false
	case it.PayloadRemoved != "":
		return removed(l, it, dryRun, inDLQ), false
	case it.Status == inbox.Processing && it.LeaseUntil.After(now):
		l.Outcome, l.Note = Skipped, "a processor holds its lease until "+it.LeaseUntil.Format(time.RFC3339)+"; try again after that"
		return l, false
	}
	// An inline payload came with the item; another is read.
	if it.Payload == nil {
		if _, err := h.store.Payload(ctx, key); err != nil {
			l.Outcome, l.Note = failed, "no stored payload to replay from: "+err.Error()
			return l, false
		}
	}
	if dryRun {
		l.Outcome = WouldReplay
		return l, false
	}
	it, err = h.store.Requeue(ctx, key, now)
	switch {
	case errors.Is(err, inbox.ErrFinished):
		// It finished between the read and the write.
		l.Status = string(inbox.Done)
		return h.done(l, dryRun, inDLQ), false
	case errors.Is(err, inbox.ErrLeaseHeld):
		l.Outcome, l.Note = Skipped, "a processor took its lease just now; try again later"
		return l, false
	case err != nil:
		l.Outcome, l.Note = failed, err.Error()
		return l, false
	}
	if err := h.events.Send(ctx, queue.Envelope{Key: key, Type: it.EventType}); err != nil {
		l.Outcome, l.Note = failed, "claim put back to FAILED, but the message was not sent ("+err.Error()+"); the reconciler re-enqueues it after STUCK_AFTER, or replay again"
		return l, false
	}
	l.Outcome = Replayed
	return l, true
}

// removed refuses an event whose payload was erased or expired
// (inbox.Item.PayloadRemoved): there is nothing to run it on, so its DLQ
// message goes.
func removed(l Line, it inbox.Item, dryRun, inDLQ bool) Line {
	why := "its payload was " + it.PayloadRemoved + " at " + it.RemovedAt.Format(time.RFC3339)
	if it.PayloadRemoved == inbox.RemovedErased {
		why = "its payload was erased at its subject's request at " + it.RemovedAt.Format(time.RFC3339)
	}
	why += "; it cannot be replayed"
	switch {
	case !inDLQ:
		l.Outcome, l.Note = Skipped, why
	case dryRun:
		l.Outcome, l.Note = wouldDrop, why+"; its DLQ message would be deleted"
	default:
		l.Outcome, l.Note = dropped, why+"; its DLQ message was deleted"
	}
	return l
}

// done reports an event that is already DONE.
func (h *Handler) done(l Line, dryRun, inDLQ bool) Line {
	switch {
	case !inDLQ:
		l.Outcome, l.Note = Skipped, "already DONE; nothing to do"
	case dryRun:
		l.Outcome, l.Note = wouldDrop, "already DONE; its DLQ message would be deleted"
	default:
		l.Outcome, l.Note = dropped, "already DONE; its DLQ message was deleted"
	}
	return l
}

func (h *Handler) logLine(ctx context.Context, l Line) {
	if h.cfg.Progress != nil {
		h.cfg.Progress(l)
	}
	level := slog.LevelInfo
	if l.Outcome == failed {
		level = slog.LevelWarn
	}
	h.log.Log(ctx, level, "replay "+l.Outcome, "key", l.Key, "message_id", l.MessageID,
		"status", l.Status, "attempts", strconv.Itoa(l.Attempts), "reason", l.Reason, "note", l.Note)
}

// lineBreaks makes every line break LF.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// sameReason reports whether a DLQ message's reason is the one asked
// for, line breaks compared as one (a reason of several failures has a
// line each).
func sameReason(parked, asked string) bool {
	return lineBreaks.Replace(parked) == lineBreaks.Replace(asked)
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
