package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
)

// maxShownPayload is the most of a payload the Event page shows.
const maxShownPayload = 256 << 10

// step is one entry of an event's timeline: when (zero when the store
// keeps no time for it), what, and more about it.
type step struct {
	At     time.Time
	What   string
	Detail string
	Class  string // "ok", "warn", "bad": how it went
}

// eventView is the Event page.
type eventView struct {
	Event
	Timeline    []step
	Payload     string // pretty-printed, or as it is; at most maxShownPayload
	PayloadNote string // why it is not all shown, or gone
	Replay      replayForm
	CLI         string // the replay's command line
	Inspect     string // inspect's command line
	CanReplay   bool
	WhyNot      string // why there is no replay button
}

// eventPage shows one event: its timeline, its payload and its replay.
func (s *Server) eventPage(w http.ResponseWriter, r *http.Request) {
	raw := strings.TrimSpace(r.URL.Query().Get("key"))
	key, err := s.stack.Find(r.Context(), raw)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, fmt.Sprintf("%v", err))
		return
	}
	ev, err := s.stack.Event(r.Context(), key)
	if errors.Is(err, inbox.ErrNotFound) {
		s.fail(w, r, http.StatusNotFound, key.String()+" is not in the inbox: was it sent to this stack? (Its record expires 35 days after it arrived.)")
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err.Error())
		return
	}
	v := eventView{Event: ev, Timeline: timeline(ev), Replay: replayForm{Key: key.String()},
		Inspect: "hookinbox inspect " + shellQuote(key.String()) + " --payload" + s.cfg.StackArgs}
	v.CLI = v.Replay.CLI(s.cfg.StackArgs)
	v.Payload, v.PayloadNote = showPayload(ev)
	v.CanReplay, v.WhyNot = replayable(ev.Item, s.cfg.ReadOnly)
	refresh := 0
	if !ev.Item.Status.Final() {
		refresh = 3
	}
	s.render(w, r, http.StatusOK, "event", page{Title: key.String(), Nav: "events", Refresh: refresh, Body: v})
}

// replayable says whether the page offers a replay of it, and if not,
// why.
func replayable(it inbox.Item, readOnly bool) (bool, string) {
	switch {
	case it.PayloadRemoved != "":
		return false, "Its payload was " + it.PayloadRemoved + " at " + when(it.RemovedAt) + ": it cannot be replayed."
	case it.Status == inbox.Done:
		return false, "It is DONE: a replay would do nothing."
	case readOnly:
		return false, "The console is read-only: run the command below."
	}
	return true, ""
}

// timeline lists what is known of the event's life, in order.
func timeline(ev Event) []step {
	it := ev.Item
	out := []step{{At: it.ReceivedAt, What: "received", Detail: "claimed " + it.Key.String() + " (" + it.EventType + ")", Class: "ok"}}
	switch received := it.ReceivedAt.Truncate(time.Millisecond); {
	case it.EnqueuedAt.IsZero():
	case it.EnqueuedAt.Before(received):
		out = append(out, step{At: it.ReceivedAt, What: "not sent", Detail: "its message could not be sent; the next delivery or the reconciler's next run sends it"})
	case !it.EnqueuedAt.Equal(received):
		out = append(out, step{At: it.EnqueuedAt, What: "message sent", Detail: "the last message for it went to the events queue"})
	}
	if it.Attempts > 0 {
		s := step{What: plural(it.Attempts, "attempt"), Detail: "by the processor"}
		if it.InfraFailures > 0 {
			s.Detail += fmt.Sprintf("; %d failed because DynamoDB or SQS was unavailable", it.InfraFailures)
		}
		if it.LastError != "" {
			s.Detail, s.Class = s.Detail+"; last error: "+it.LastError, "warn"
		}
		out = append(out, s)
	}
	if it.LeaseOwner != "" {
		out = append(out, step{At: it.LeaseUntil, What: "processing", Detail: "leased by " + it.LeaseOwner + " until then"})
	}
	for _, e := range ev.Effects {
		out = append(out, step{What: "effect " + e.Effect, Detail: "done: " + orDash(e.Result) + " (idempotency key " + e.IdempotencyKey + ")", Class: "ok"})
	}
	for _, in := range ev.OpenIntents {
		out = append(out, step{At: in.StartedAt, What: "effect " + in.Effect, Detail: "started by attempt " + in.Attempt + ", outcome unknown: it may have run (hookinbox inspect prints the two commands that resolve it)", Class: "bad"})
	}
	for _, d := range ev.Destinations {
		out = append(out, destinationStep(d))
	}
	return append(out, ending(it)...)
}

// destinationStep is a destination's deliveries of the event.
func destinationStep(d destination.Attempts) step {
	st := step{At: d.LastAt, What: "destination " + d.Destination, Class: "warn"}
	st.Detail = fmt.Sprintf("%s, last answer %s", plural(d.Attempts, "attempt"), orDash(d.LastAnswer))
	if d.LastStatus != 0 {
		st.Detail += fmt.Sprintf(" (HTTP %d)", d.LastStatus)
	}
	st.Detail += fmt.Sprintf(" in %d ms", d.LastTookMS)
	if d.Delivered {
		st.Detail, st.Class = "delivered: "+st.Detail, "ok"
	}
	return st
}

// ending is how the event finished, and what became of its payload.
func ending(it inbox.Item) []step {
	var out []step
	switch it.Status {
	case inbox.Done, inbox.Ignored:
		out = append(out, step{At: it.ProcessedAt, What: strings.ToLower(string(it.Status)), Detail: orDash(it.Outcome), Class: "ok"})
	case inbox.Dead:
		out = append(out, step{At: it.ProcessedAt, What: "parked in the DLQ", Detail: "why: " + orDash(it.LastError), Class: "bad"})
	}
	if it.PayloadRemoved != "" {
		out = append(out, step{At: it.RemovedAt, What: "payload " + it.PayloadRemoved, Detail: "every stored copy removed; the dedupe record stays"})
	}
	slices.SortStableFunc(out, func(a, b step) int { return a.At.Compare(b.At) })
	if it.EraseWhenFinished {
		out = append(out, step{What: "erasure waiting", Detail: "an erasure named it before it finished: its payload is kept until the event finishes, then erased", Class: "warn"})
	}
	return out
}

// showPayload returns the payload pretty-printed when it is JSON, cut
// at maxShownPayload, and a note when it is cut or gone.
func showPayload(ev Event) (string, string) {
	it, p := ev.Item, ev.Payload
	note := ""
	switch {
	case it.PayloadRemoved != "":
		return "", "Erased: every stored copy was removed at " + when(it.RemovedAt) + " (" + it.PayloadRemoved + ")."
	case p == nil:
		return "", "No payload is stored for this event."
	case len(p) > maxShownPayload:
		return string(p[:maxShownPayload]), fmt.Sprintf("%d bytes: the first %d KiB shown as stored. The whole: the inspect command below.", len(p), maxShownPayload>>10)
	case it.EraseWhenFinished:
		note = "An erasure named this event: this payload is erased once the event has finished."
	}
	var b bytes.Buffer
	if json.Indent(&b, p, "", "  ") == nil {
		return b.String(), note
	}
	return string(p), note
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// plural returns "1 attempt", "2 attempts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
