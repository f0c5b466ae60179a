package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/console"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// rows returns the event keys of an Events page, in order.
func rows(page string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<td class="key" data-label="Key"><a href="event\?key=[^"]+">([^<]+)</a></td>`).FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// shop is a stack with events of every status: a DEAD one in the DLQ
// only (in no index), as the processor leaves it.
func shop(now time.Time) *fakeStack {
	st := newFake(
		event("stripe#evt_done", "checkout.session.completed", inbox.Done, now.Add(-4*time.Minute)),
		event("stripe#evt_failed", "invoice.paid", inbox.Failed, now.Add(-3*time.Minute)),
		event("github#d-1", "push", inbox.Ignored, now.Add(-2*time.Minute)),
		event("stripe#evt_dead", "checkout.session.completed", inbox.Dead, now.Add(-time.Minute)),
	)
	st.dlq.park("stripe#evt_dead", "checkout.session.completed", "create invoice: price unknown", now.Add(-time.Minute))
	return st
}

func TestEventsPageListsTheLatestFirstWithTheParked(t *testing.T) {
	now := time.Now()
	st := shop(now)
	c := newClient(t, st, false)
	tests := []struct {
		name, path string
		want       []string
	}{
		{"all", "/events", []string{"stripe#evt_dead", "github#d-1", "stripe#evt_failed", "stripe#evt_done"}},
		{"provider", "/events?provider=github", []string{"github#d-1"}},
		{"type", "/events?type=checkout", []string{"stripe#evt_dead", "stripe#evt_done"}},
		{"parked", "/events?status=DEAD", []string{"stripe#evt_dead"}},
		{"finished", "/events?status=DONE", []string{"stripe#evt_done"}},
		{"window", "/events?from=" + url.QueryEscape(now.Add(-150*time.Second).Format("2006-01-02T15:04")), nil},
		{"key", "/events?key=stripe%23evt_failed", []string{"stripe#evt_failed"}},
		{"bare id", "/events?key=evt_done", []string{"stripe#evt_done"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := c.get(tt.path)
			got := rows(w.Body.String())
			if tt.name == "window" {
				// From the start of the minute 150 s ago: those since then.
				from := now.Add(-150 * time.Second).Truncate(time.Minute)
				for _, ev := range []string{"stripe#evt_dead", "github#d-1", "stripe#evt_failed", "stripe#evt_done"} {
					if it, _ := st.Get(context.Background(), webhook.Key(ev)); !inbox.LastActive(it).Before(from) {
						tt.want = append(tt.want, ev)
					}
				}
			}
			if w.Code != http.StatusOK || strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("answered %d, rows %v, want %v:\n%s", w.Code, got, tt.want, w.Body)
			}
		})
	}
	page := c.get("/events").Body.String()
	for _, want := range []string{"create invoice: price unknown", `data-refresh="10"`, "DEAD</span> 1", "DONE</span> 1"} {
		if !strings.Contains(page, want) {
			t.Errorf("Events page lacks %q", want)
		}
	}
	if st.dlq.stillHidden() != 0 {
		t.Errorf("%d DLQ messages left hidden by the page's read", st.dlq.stillHidden())
	}
}

func TestEventsPageSaysWhatItCannotFind(t *testing.T) {
	c := newClient(t, shop(time.Now()), false)
	for path, want := range map[string]string{
		"/events?key=stripe%23evt_nobody": "stripe#evt_nobody is not in the inbox",
		"/events?key=%3Cscript%3E":        "malformed: event id has character '<'",
		"/events?from=yesterday":          "from: not a date and time",
	} {
		w := c.get(path)
		if body := w.Body.String(); !strings.Contains(htmlUnescape(body), want) || strings.Contains(body, "<script>") {
			t.Errorf("%s answered %d without %q:\n%s", path, w.Code, want, body)
		}
	}
}

// TestEventsPagePagesOlderEvents checks the Older link: the next page
// starts where the last ended, and does not refresh itself.
func TestEventsPagePagesOlderEvents(t *testing.T) {
	now := time.Now()
	st := newFake()
	for i := range 60 {
		ev := event("stripe#evt_"+string(rune('a'+i/26))+string(rune('a'+i%26)), "t", inbox.Done, now.Add(-time.Duration(i)*time.Second))
		st.events[ev.Item.Key] = ev
	}
	c := newClient(t, st, false)
	first := c.get("/events").Body.String()
	older := regexp.MustCompile(`href="(events\?before=[^"]+)"`).FindStringSubmatch(first)
	if len(rows(first)) != 50 || older == nil {
		t.Fatalf("first page: %d rows, older link %v", len(rows(first)), older)
	}
	second := c.get(htmlUnescape(older[1])).Body.String()
	if got := rows(second); len(got) != 10 || got[0] != "stripe#evt_by" || strings.Contains(second, "data-refresh") {
		t.Errorf("second page: rows %v, refreshing %v", got, strings.Contains(second, "data-refresh"))
	}
}

// TestEventsPagePagesABurst checks the Older link when a burst of
// events, and a parked one, share one time: the pages list each of
// them once.
func TestEventsPagePagesABurst(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	st := newFake()
	for i := range 60 {
		ev := event(fmt.Sprintf("stripe#evt_burst%02d", i), "t", inbox.Done, now)
		st.events[ev.Item.Key] = ev
	}
	st.dlq.park("stripe#evt_burst_parked", "t", "refused", now)
	c := newClient(t, st, false)
	seen := map[string]int{}
	page := c.get("/events").Body.String()
	for range 3 {
		for _, k := range rows(page) {
			seen[k]++
		}
		older := regexp.MustCompile(`href="(events\?before=[^"]+)"`).FindStringSubmatch(page)
		if older == nil {
			break
		}
		page = c.get(htmlUnescape(older[1])).Body.String()
	}
	if len(seen) != 61 {
		t.Errorf("the pages listed %d of the 61 events", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", k, n)
		}
	}
}

// TestSubjectSearchKeepsTheSubjectOutOfTheAddress checks the search by
// subject: the page is found by the subject's hashes, and the email goes
// in no URL.
func TestSubjectSearchKeepsTheSubjectOutOfTheAddress(t *testing.T) {
	st := shop(time.Now())
	st.subjects[hashOf("email:ada@lovelace.example")] = []webhook.Key{"stripe#evt_done", "stripe#evt_gone"}
	c := newClient(t, st, false)
	w := c.post("/subject", url.Values{"subject": {"Ada@Lovelace.example"}})
	loc := w.Header().Get("Location")
	if w.Code != http.StatusSeeOther || strings.Contains(strings.ToLower(loc), "ada") || !strings.Contains(loc, "hash=") {
		t.Fatalf("answered %d, Location %q: want the subject's hashes only", w.Code, loc)
	}
	page := c.get(loc).Body.String()
	if got := rows(page); len(got) != 1 || got[0] != "stripe#evt_done" || strings.Contains(strings.ToLower(page), "lovelace") {
		t.Errorf("rows %v; the page names the subject: %v", got, strings.Contains(page, "lovelace"))
	}
	if w := c.post("/subject", url.Values{"subject": {"not a subject"}}); w.Code != http.StatusBadRequest {
		t.Errorf("a malformed subject: %d, want 400", w.Code)
	}
}

func TestEventPageShowsTheTimelineAndPayload(t *testing.T) {
	now := time.Now()
	ev := event("stripe#evt_dead", "checkout.session.completed", inbox.Dead, now)
	ev.Item.Attempts, ev.Item.LastError = 5, "create invoice: price unknown"
	ev.Effects = []effects.Record{{Effect: "grant-access", IdempotencyKey: "hookinbox:stripe#evt_dead:grant-access", Result: "granted"}}
	ev.Destinations = []destination.Attempts{{Destination: "crm", Attempts: 2, LastStatus: 503, LastAnswer: "503 Service Unavailable", LastAt: now, LastTookMS: 41}}
	c := newClient(t, newFake(ev), false)
	w := c.get("/event?key=stripe%23evt_dead")
	body := w.Body.String()
	for _, want := range []string{
		"5 attempts", "last error: create invoice: price unknown", "effect grant-access", "done: granted",
		"destination crm", "503 Service Unavailable (HTTP 503) in 41 ms", "parked in the DLQ", "why: create invoice: price unknown",
		"&#34;object&#34;: &#34;event&#34;", // pretty-printed, escaped
		`action="replay-dry-run"`, "hookinbox replay --key &#39;stripe#evt_dead&#39; --stack test",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("Event page lacks %q:\n%s", want, body)
		}
	}
	if w.Code != http.StatusOK || strings.Contains(body, `data-refresh`) {
		t.Errorf("answered %d; a DEAD event's page, which no processor changes, refreshes itself: %v", w.Code, strings.Contains(body, "data-refresh"))
	}
	for path, want := range map[string]int{"/event?key=stripe%23evt_nobody": http.StatusNotFound, "/event?key=": http.StatusNotFound, "/event?key=stripe%23%3Cb%3E": http.StatusNotFound} {
		if w := c.get(path); w.Code != want || strings.Contains(w.Body.String(), "<b>") {
			t.Errorf("%s: %d, want %d:\n%s", path, w.Code, want, w.Body)
		}
	}
}

// TestAnErasedEventCannotBeReplayedFromItsPage checks an erased event's
// page: "erased, with when", and no replay form.
func TestAnErasedEventCannotBeReplayedFromItsPage(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	ev := event("stripe#evt_erased", "customer.created", inbox.Dead, at)
	ev.Item.PayloadRemoved, ev.Item.RemovedAt, ev.Payload = inbox.RemovedErased, at, nil
	c := newClient(t, newFake(ev), false)
	body := c.get("/event?key=stripe%23evt_erased").Body.String()
	if strings.Contains(body, `action="replay-dry-run"`) || !strings.Contains(body, "Erased: every stored copy was removed at "+at.Local().Format("2006-01-02 15:04:05 MST")) ||
		!strings.Contains(body, "cannot be replayed") {
		t.Errorf("erased event's page:\n%s", body)
	}
}

// TestAnErasureWaitingForAParkedEventIsShown checks the page of a
// parked event an erasure named: its payload is kept until it finishes,
// so the page says so, and offers the replay that finishes it.
func TestAnErasureWaitingForAParkedEventIsShown(t *testing.T) {
	ev := event("stripe#evt_waiting", "checkout.session.completed", inbox.Dead, time.Now())
	ev.Item.EraseWhenFinished = true
	c := newClient(t, newFake(ev), false)
	body := c.get("/event?key=stripe%23evt_waiting").Body.String()
	if !strings.Contains(body, `action="replay-dry-run"`) || !strings.Contains(body, "erasure waiting") ||
		!strings.Contains(body, "kept until the event finishes, then erased") {
		t.Errorf("the page of a parked event an erasure waits for:\n%s", body)
	}
}

// TestHostileValuesAreShownAsText checks that an event's type, error,
// payload and DLQ reason, which come from providers, are shown as text
// wherever they appear, never as markup.
func TestHostileValuesAreShownAsText(t *testing.T) {
	const evil = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
	now := time.Now()
	ev := event("stripe#evt_x", evil, inbox.Dead, now)
	ev.Item.LastError = evil
	ev.Payload = []byte(`{"name":"` + strings.ReplaceAll(evil, `"`, `\"`) + `","html":"</pre></code><script>alert(3)</script>"}`)
	ev.Destinations = []destination.Attempts{{Destination: "crm", LastAnswer: evil}}
	st := newFake(ev, event("github#d-1", evil, inbox.Done, now))
	st.dlq.park("stripe#evt_x", evil, evil, now)
	st.logs["github#d-1"] = []destination.Attempts{{Destination: "crm", LastAnswer: evil}}
	c := newClient(t, st, false)
	for _, path := range []string{"/events", "/events?type=" + url.QueryEscape(evil), "/event?key=stripe%23evt_x", "/parked", "/destinations"} {
		body := c.get(path).Body.String()
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") || !strings.Contains(body, "&lt;script&gt;alert(") {
			t.Errorf("%s shows a value as markup, or not at all:\n%s", path, body)
		}
	}
}

func TestAHugePayloadIsShownInPart(t *testing.T) {
	ev := event("stripe#evt_big", "t", inbox.Done, time.Now())
	ev.Payload = []byte(`{"blob":"` + strings.Repeat("x", 4<<20) + `"}`)
	c := newClient(t, newFake(ev), false)
	w := c.get("/event?key=stripe%23evt_big")
	if w.Code != http.StatusOK || w.Body.Len() > 400<<10 || !strings.Contains(w.Body.String(), fmt.Sprintf("%d bytes: the first 256 KiB shown", len(ev.Payload))) {
		t.Errorf("answered %d with %d bytes", w.Code, w.Body.Len())
	}
}

// TestParkedPageLeavesTheDLQToAnotherReader checks that the console
// does not read the DLQ while something else holds its messages (a
// replay running elsewhere) or empties it (a redrive): a read then would
// hide messages from it, and a replay that finds none stops early. It
// reads again once the DLQ is left alone.
func TestParkedPageLeavesTheDLQToAnotherReader(t *testing.T) {
	now := time.Now()
	st := newFake()
	for i := range 6 {
		st.dlq.park(webhook.Key(fmt.Sprintf("stripe#evt_%d", i)), "checkout.session.completed", "price unknown", now)
	}
	c := newClient(t, st, false)
	c.get("/parked")
	elsewhere := "Something else is reading or emptying the DLQ"
	// A replay elsewhere holds two messages.
	held, _ := st.dlq.Receive(context.Background(), 2, time.Minute, 0)
	reads := st.dlq.receives
	st.dlq.park("stripe#evt_new", "checkout.session.completed", "price unknown", now) // the depth changes
	if body := c.get("/parked").Body.String(); st.dlq.receives != reads || !strings.Contains(body, elsewhere) {
		t.Errorf("read the DLQ %d times while another reader held messages", st.dlq.receives-reads)
	}
	// It moves them, and goes on emptying the DLQ.
	for _, m := range held {
		_ = st.dlq.Release(context.Background(), m.ReceiptHandle)
	}
	st.dlq.take(2)
	c.get("/events")
	st.dlq.take(1)
	if body := c.get("/parked").Body.String(); st.dlq.receives != reads || !strings.Contains(body, elsewhere) {
		t.Errorf("read the DLQ %d times while it was being emptied", st.dlq.receives-reads)
	}
	// Left alone, it is read again.
	if body := c.get("/parked").Body.String(); st.dlq.receives == reads || strings.Contains(body, elsewhere) || !strings.Contains(body, "<td>4<br>") {
		t.Errorf("not read again once left alone:\n%s", body)
	}
}

func TestParkedPageGroupsTheDLQ(t *testing.T) {
	now := time.Now()
	st := newFake()
	for i, k := range []webhook.Key{"stripe#evt_1", "stripe#evt_2", "stripe#evt_3"} {
		st.dlq.park(k, "checkout.session.completed", "create invoice: price unknown", now.Add(time.Duration(i)*time.Second))
	}
	st.dlq.park("github#d-9", "push", "no handler", now)
	c := newClient(t, st, false)
	body := c.get("/parked").Body.String()
	first, second := strings.Index(body, "create invoice: price unknown"), strings.Index(body, "no handler")
	if first < 0 || second < first || !strings.Contains(body, "<td>3<br>") {
		t.Errorf("Parked page, the largest group first:\n%s", body)
	}
	f := formFields(t, body, "replay-dry-run")
	if f.Get("all") != "1" || f.Get("type") != "checkout.session.completed" || f.Get("reason") != "create invoice: price unknown" {
		t.Errorf("the first group's replay form: %v", f)
	}
	if st.dlq.stillHidden() != 0 {
		t.Errorf("%d messages left hidden", st.dlq.stillHidden())
	}
	// Read again only when the DLQ changes.
	before := st.dlq.receives
	c.get("/parked")
	c.get("/events")
	if st.dlq.receives != before {
		t.Errorf("the DLQ was read again %d times although it did not change", st.dlq.receives-before)
	}
	st.dlq.park("stripe#evt_4", "checkout.session.completed", "create invoice: price unknown", now)
	if body := c.get("/parked").Body.String(); !strings.Contains(body, "<td>4<br>") {
		t.Errorf("after one more was parked:\n%s", body)
	}
}

func TestHealthDestinationsAndPersonalPages(t *testing.T) {
	now := time.Now()
	st := shop(now)
	st.health = console.Health{EventsQueue: console.QueueDepth{Name: "hookinbox-events", Visible: 2}, DLQ: console.QueueDepth{Name: "hookinbox-events-dlq", Visible: 1},
		StuckAfter: "15m0s", Window: "1h0m0s", Counts: []console.Count{{Name: "Received", Value: 7}}, Alarms: []string{"shop-DLQNotEmptyAlarm-1X"}}
	st.dests = []string{"crm"}
	st.logs["stripe#evt_failed"] = []destination.Attempts{{Destination: "crm", Attempts: 3, LastStatus: 502, LastAnswer: "502 Bad Gateway", LastAt: now}}
	st.erasures = []inbox.Erasure{{At: now, By: "cli:ops", SubjectHash: "abcdef0123456789abcdef", Events: 2, Copies: 3}}
	c := newClient(t, st, false)
	for path, wants := range map[string][]string{
		"/health":       {"hookinbox-events", "2 waiting", "shop-DLQNotEmptyAlarm-1X is in ALARM", "<svg", "<rect", "Received", "hookinbox status --stack test"},
		"/destinations": {"<h2>crm</h2>", "502 Bad Gateway (HTTP 502)", "Waiting on it: <a href=\"event?key=stripe%23evt_failed\">"},
		"/personal":     {"cli:ops", "abcdef0123456789…", `action="erase-dry-run"`, `action="export"`},
	} {
		w := c.get(path)
		for _, want := range wants {
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) {
				t.Errorf("%s (%d) lacks %q:\n%s", path, w.Code, want, w.Body)
			}
		}
		checkHeaders(t, w)
	}
}
