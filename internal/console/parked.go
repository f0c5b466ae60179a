package console

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

const (
	// maxPeek is the most DLQ messages the console reads for its pages.
	maxPeek = 500
	// peekVisibility hides the messages read while the read lasts (a
	// second or so), then they are made visible again at once.
	peekVisibility = 30 * time.Second
	// peekFresh is how long a read of the DLQ serves the pages while its
	// depth stays the same.
	peekFresh = time.Minute
)

// parkedMessage is one DLQ message, as its body and attributes say.
type parkedMessage struct {
	MessageID string
	Key       webhook.Key // "" when the body is not an envelope
	Type      string
	Reason    string
	Attempts  int
	ParkedAt  time.Time
	Size      int
}

// dlqView is what the console last read of the DLQ.
type dlqView struct {
	Messages []parkedMessage
	Depth    int  // the DLQ's approximate size
	More     bool // it holds more than the console read
	At       time.Time
	Err      string
	Busy     bool // a change was running: this read is from before it
	// Elsewhere: another reader (a replay, a redrive) holds messages or
	// is emptying the DLQ; this read is from before, so as not to hide
	// messages from it.
	Elsewhere bool
}

// dlqCache keeps the last read of the DLQ, so that the pages, which
// refresh themselves, read it only when its depth changes, at most once
// a minute otherwise, and never while a change runs or another reader
// holds or empties its messages.
type dlqCache struct {
	mu    sync.Mutex
	view  dlqView
	stale bool
	depth int // the depth seen last, read or not
}

func (c *dlqCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stale = true
}

// parked returns the DLQ's messages, read afresh when needed.
func (s *Server) parked(ctx context.Context) dlqView {
	d, err := s.stack.DLQ().Depth(ctx)
	if err != nil {
		return dlqView{Err: "the DLQ's depth: " + err.Error(), At: s.now()}
	}
	c := s.dlq
	c.mu.Lock()
	defer c.mu.Unlock()
	now := s.now()
	if !c.stale && c.view.Depth == d.Total() && now.Sub(c.view.At) < peekFresh && c.view.Err == "" {
		return c.view
	}
	falling := d.Total() < c.depth
	c.depth = d.Total()
	if d.Total() == 0 {
		c.view, c.stale = dlqView{At: now}, false
		return c.view
	}
	if !s.actions.TryLock() {
		v := c.view
		v.Busy = true
		return v
	}
	defer s.actions.Unlock()
	if (falling && !c.stale || d.InFlight > 0) && !c.view.At.IsZero() {
		// Someone else reads or empties the DLQ: a read now would hide
		// its messages from them. Read again once they are done.
		v := c.view
		v.Elsewhere = true
		return v
	}
	msgs, err := peek(ctx, s.stack.DLQ(), d.Visible)
	c.view, c.stale = dlqView{Messages: msgs, Depth: d.Total(), More: len(msgs) < d.Total(), At: now}, false
	if err != nil {
		c.view.Err = "reading the DLQ: " + err.Error()
	}
	return c.view
}

// peek reads up to maxPeek messages of the DLQ, visible says about how
// many, and makes each visible again before it returns, as a dry-run
// replay does.
func peek(ctx context.Context, q DeadLetters, visible int) (out []parkedMessage, err error) {
	var handles []string
	defer func() {
		for _, h := range handles {
			_ = q.Release(context.WithoutCancel(ctx), h) // else visible after peekVisibility
		}
	}()
	seen := map[string]bool{}
	for wait := time.Duration(0); len(out) < maxPeek; {
		msgs, err := q.Receive(ctx, queue.MaxReceive, peekVisibility, wait)
		if err != nil {
			return out, err
		}
		if len(msgs) == 0 && (wait > 0 || len(out) >= visible) {
			return out, nil
		}
		wait = 0
		if len(msgs) == 0 {
			wait = time.Second // a short poll may miss messages: poll once more, long
		}
		for _, m := range msgs {
			handles = append(handles, m.ReceiptHandle)
			if seen[m.ID] {
				return out, nil // came round to one already read
			}
			seen[m.ID] = true
			out = append(out, parkedOf(m))
		}
	}
	return out, nil
}

// parkedOf reads a DLQ message's envelope and attributes.
func parkedOf(m queue.Message) parkedMessage {
	p := parkedMessage{MessageID: m.ID, Type: m.Attributes[queue.AttrEventType], Reason: m.Attributes[queue.AttrReason], Size: len(m.Body), ParkedAt: m.SentAt}
	p.Attempts, _ = strconv.Atoi(m.Attributes[queue.AttrAttempts])
	if at, err := time.Parse(time.RFC3339, m.Attributes[queue.AttrParkedAt]); err == nil {
		p.ParkedAt = at
	}
	if env, err := queue.ParseEnvelope(m.Body); err == nil {
		p.Key, p.Type = env.Key, cmp.Or(env.Type, p.Type)
	}
	return p
}

// parkedGroup is the DLQ's messages of one event type and reason.
type parkedGroup struct {
	Type, Reason string
	Count        int
	Keys         []webhook.Key // the first few
	Unreadable   int           // messages that are not envelopes
	First, Last  time.Time
}

// groups returns the DLQ's messages by type and reason, the largest
// group first.
func groups(msgs []parkedMessage) []parkedGroup {
	at := map[[2]string]int{}
	var out []parkedGroup
	for _, m := range msgs {
		k := [2]string{m.Type, m.Reason}
		i, ok := at[k]
		if !ok {
			i, at[k] = len(out), len(out)
			out = append(out, parkedGroup{Type: m.Type, Reason: m.Reason, First: m.ParkedAt, Last: m.ParkedAt})
		}
		g := &out[i]
		g.Count++
		if m.Key == "" {
			g.Unreadable++
		} else if len(g.Keys) < 5 {
			g.Keys = append(g.Keys, m.Key)
		}
		g.First, g.Last = minTime(g.First, m.ParkedAt), maxTime(g.Last, m.ParkedAt)
	}
	slices.SortStableFunc(out, func(a, b parkedGroup) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// parkedPage shows the DLQ by type and reason, the replay of one group
// or of all, and what the last replays could not replay, and why.
func (s *Server) parkedPage(w http.ResponseWriter, r *http.Request) {
	v := s.parked(r.Context())
	body := struct {
		DLQ    dlqView
		Groups []parkedGroup
		Jobs   []jobView
	}{v, groups(v.Messages), s.jobs.recent()}
	s.render(w, r, http.StatusOK, "parked", page{Title: "Parked", Nav: "parked", Refresh: 15, Body: body})
}
