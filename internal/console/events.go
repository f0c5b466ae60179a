package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

const (
	// pageSize is how many events the Events page lists at a time.
	pageSize = 50
	// maxSubjectEvents is the most events a subject search shows.
	maxSubjectEvents = 200
	// maxHashes is the most subject hashes one search reads: a subject
	// under each key of a rotation.
	maxHashes = 10
	// formTime is the time of the page's from and to fields
	// (datetime-local), in the machine's time zone.
	formTime = "2006-01-02T15:04"
)

// statuses are the statuses the filter offers, in the order of an
// event's life.
func statuses() []inbox.Status {
	return []inbox.Status{inbox.Received, inbox.Processing, inbox.Failed, inbox.Done, inbox.Ignored, inbox.Dead}
}

// eventsQuery is the Events page's filter, as its URL says it.
type eventsQuery struct {
	Provider, Type, Status, From, To, Key, Before string
	BeforeKey                                     string   // the key of the last event of the page before
	Hashes                                        []string // a subject's, from the subject search
}

func eventsQueryOf(v url.Values) eventsQuery {
	return eventsQuery{
		Provider: v.Get("provider"), Type: strings.TrimSpace(v.Get("type")), Status: v.Get("status"),
		From: v.Get("from"), To: v.Get("to"), Key: strings.TrimSpace(v.Get("key")), Before: v.Get("before"), BeforeKey: v.Get("before_key"),
		Hashes: v["hash"][:min(len(v["hash"]), maxHashes)],
	}
}

// recent returns the RecentQuery of the query's window (window), the
// page after the event of BeforeKey when its time bounds the window.
func (q eventsQuery) recent() (inbox.RecentQuery, error) {
	since, before, err := q.window()
	rq := inbox.RecentQuery{Since: since, Before: before}
	if cursor, perr := time.Parse(time.RFC3339Nano, q.Before); perr == nil && cursor.Equal(before) {
		rq.BeforeKey = webhook.Key(q.BeforeKey)
	}
	return rq, err
}

// window returns the time range the query asks for, as RecentQuery
// bounds it.
func (q eventsQuery) window() (since, before time.Time, err error) {
	parse := func(name, s, layout string) (time.Time, error) {
		if s == "" {
			return time.Time{}, nil
		}
		t, err := time.ParseInLocation(layout, s, time.Local)
		if err != nil {
			return t, errors.New(name + ": not a date and time")
		}
		return t, nil
	}
	if since, err = parse("from", q.From, formTime); err != nil {
		return
	}
	if before, err = parse("to", q.To, formTime); err != nil {
		return
	}
	if q.Before != "" {
		var cursor time.Time
		if cursor, err = parse("before", q.Before, time.RFC3339Nano); err == nil && (before.IsZero() || cursor.Before(before)) {
			before = cursor
		}
	}
	return
}

// matches reports whether it passes the filters the indexes do not
// apply: type and status.
func (q eventsQuery) matches(it inbox.Item) bool {
	return (q.Type == "" || strings.Contains(it.EventType, q.Type)) && (q.Status == "" || string(it.Status) == q.Status) &&
		(q.Provider == "" || it.Key.Provider() == q.Provider)
}

// statusCount is how many listed events are in a status.
type statusCount struct {
	Status inbox.Status
	Count  int
}

// eventsView is the Events page.
type eventsView struct {
	Q         eventsQuery
	Providers []string
	Statuses  []inbox.Status
	Events    []inbox.Item
	Counts    []statusCount
	Read      int    // events read for the counts
	Older     string // the URL of the next page, when there is one
	DLQ       dlqView
	Searched  string // what a key or subject search looked for
	Problems  []string
}

// eventsPage lists the latest events, newest first, with their filters
// and counts. Unless it is a later page, it refreshes itself.
func (s *Server) eventsPage(w http.ResponseWriter, r *http.Request) {
	q := eventsQueryOf(r.URL.Query())
	v := eventsView{Q: q, Providers: s.cfg.Providers, Statuses: statuses()}
	status := http.StatusOK
	switch {
	case q.Key != "":
		v.Searched = "key " + q.Key
		status = s.byKey(r.Context(), &v)
	case len(q.Hashes) > 0:
		v.Searched = "subject (hash " + shorten(q.Hashes[0], 12) + ")"
		s.bySubject(r.Context(), &v)
	default:
		s.latest(r.Context(), &v, r.URL.Query())
	}
	refresh := 10
	if q.Before != "" {
		refresh = 0
	}
	s.render(w, r, status, "events", page{Title: "Events", Nav: "events", Refresh: refresh, Body: v})
}

// byKey lists the one event a key names, or says why not.
func (s *Server) byKey(ctx context.Context, v *eventsView) int {
	key, err := s.stack.Find(ctx, v.Q.Key)
	if err == nil {
		var it inbox.Item
		if it, err = s.stack.Get(ctx, key); err == nil {
			v.Events = []inbox.Item{it}
			return http.StatusOK
		}
	}
	if errors.Is(err, inbox.ErrNotFound) {
		err = errors.New(v.Q.Key + " is not in the inbox")
	}
	v.Problems = append(v.Problems, err.Error())
	return http.StatusNotFound
}

// bySubject lists the events indexed under a subject's hashes.
func (s *Server) bySubject(ctx context.Context, v *eventsView) {
	keys, err := s.stack.SubjectEvents(ctx, v.Q.Hashes, maxSubjectEvents+1)
	if err != nil {
		v.Problems = append(v.Problems, err.Error())
	}
	if len(keys) > maxSubjectEvents {
		v.Problems = append(v.Problems, "showing the first 200 of the subject's events")
		keys = keys[:maxSubjectEvents]
	}
	for _, k := range keys {
		it, err := s.stack.Get(ctx, k)
		switch {
		case errors.Is(err, inbox.ErrNotFound):
		case err != nil:
			v.Problems = append(v.Problems, err.Error())
		case v.Q.matches(it):
			v.Events = append(v.Events, it)
		}
	}
	sortLatest(v.Events)
	v.Counts, v.Read = countStatuses(v.Events), len(v.Events)
}

// latest lists the latest events of the indexes and the DLQ, a page at
// a time, and counts them by status.
func (s *Server) latest(ctx context.Context, v *eventsView, query url.Values) {
	rq, err := v.Q.recent()
	if err != nil {
		v.Problems = append(v.Problems, err.Error())
		return
	}
	st := inbox.Status(v.Q.Status)
	rq.Limit, rq.Provider = pageSize, v.Q.Provider
	rq.Unfinished, rq.Finished = st == "" || !st.Final(), st == "" || st == inbox.Done || st == inbox.Ignored
	var items []inbox.Item
	more := false
	if rq.Unfinished || rq.Finished {
		if items, more, err = s.stack.Recent(ctx, rq); err != nil {
			v.Problems = append(v.Problems, err.Error())
		}
	}
	if st == "" || st == inbox.Dead {
		v.DLQ = s.parked(ctx)
		items = mergeParked(items, v.DLQ.Messages, rq)
	}
	q := v.Q
	q.Status = ""
	items = slices.DeleteFunc(items, func(it inbox.Item) bool { return !q.matches(it) })
	v.Counts, v.Read = countStatuses(items), len(items)
	items = slices.DeleteFunc(items, func(it inbox.Item) bool { return !v.Q.matches(it) })
	v.Events = items[:min(len(items), pageSize)]
	if (more || len(items) > pageSize) && len(v.Events) > 0 {
		next := url.Values{}
		for k, vs := range query {
			next[k] = vs
		}
		last := v.Events[len(v.Events)-1]
		next.Set("before", inbox.LastActive(last).Format(time.RFC3339Nano))
		next.Set("before_key", string(last.Key))
		v.Older = "events?" + next.Encode()
	}
}

// mergeParked adds to items the parked events of the DLQ parked in the
// window of q that the indexes did not list (a DEAD event is in
// neither), as their messages tell them, newest first.
func mergeParked(items []inbox.Item, msgs []parkedMessage, q inbox.RecentQuery) []inbox.Item {
	listed := map[webhook.Key]bool{}
	for _, it := range items {
		listed[it.Key] = true
	}
	for _, m := range msgs {
		it := inbox.Item{Key: m.Key, Provider: m.Key.Provider(), EventType: m.Type, Status: inbox.Dead,
			Attempts: m.Attempts, ProcessedAt: m.ParkedAt, LastError: m.Reason}
		if m.Key == "" || listed[m.Key] || !q.Lists(it) {
			continue
		}
		listed[m.Key] = true
		items = append(items, it)
	}
	sortLatest(items)
	return items
}

// sortLatest sorts items by their last activity, the latest first.
func sortLatest(items []inbox.Item) {
	slices.SortStableFunc(items, inbox.Latest)
}

// countStatuses counts items by status, in the order of an event's life.
func countStatuses(items []inbox.Item) []statusCount {
	n := map[inbox.Status]int{}
	for _, it := range items {
		n[it.Status]++
	}
	var out []statusCount
	for _, st := range statuses() {
		out = append(out, statusCount{st, n[st]})
	}
	return out
}

// subjectSearch turns a subject (an email address or a customer id)
// into its hashes, as erase computes them, and shows the subject's
// events by those: the subject itself goes in no URL and is kept
// nowhere.
func (s *Server) subjectSearch(w http.ResponseWriter, r *http.Request) {
	sub, err := parseSubject(r.PostForm.Get("subject"))
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	hashes, err := s.stack.SubjectHashes(r.Context(), sub)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err.Error())
		return
	}
	redirect(w, "events?"+url.Values{"hash": hashes}.Encode())
}
