package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/replay"
)

// TestReplayIsADryRunThenAConfirmation checks an event's replay: the
// dry run shows what would happen and the form that confirms it; the
// confirmation runs the very request of the dry run, once, and its page
// shows the progress and the result.
func TestReplayIsADryRunThenAConfirmation(t *testing.T) {
	st := shop(time.Now())
	c := newClient(t, st, false)
	dry := c.post("/replay-dry-run", url.Values{"key": {"evt_dead"}})
	body := dry.Body.String()
	if dry.Code != http.StatusOK || !strings.Contains(body, "would replay") || !strings.Contains(body, "nothing was changed") {
		t.Fatalf("dry run answered %d:\n%s", dry.Code, body)
	}
	confirm := formFields(t, body, "replay")
	if confirm.Get("key") != "stripe#evt_dead" || confirm.Get("plan") == "" {
		t.Fatalf("confirmation form: %v", confirm)
	}
	w := c.post("/replay", confirm)
	loc := w.Header().Get("Location")
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "job?id=") {
		t.Fatalf("confirmation answered %d, Location %q", w.Code, loc)
	}
	done := c.waitJob(loc)
	if !strings.Contains(done, "1 replayed, 0 dropped") || !strings.Contains(done, `href="event?key=stripe%23evt_dead">Back`) {
		t.Errorf("the change's page:\n%s", done)
	}
	want := []replay.Request{{Keys: []string{"stripe#evt_dead"}, DryRun: true}, {Keys: []string{"stripe#evt_dead"}}}
	if diff := cmp.Diff(want, st.replays); diff != "" {
		t.Errorf("replays asked of the stack (-want +got):\n%s", diff)
	}
	// The confirmation is used up.
	if w := c.post("/replay", confirm); w.Code != http.StatusConflict || len(st.replays) != 2 {
		t.Errorf("the same confirmation again: %d, %d replays", w.Code, len(st.replays))
	}
}

// TestAConfirmationWithoutItsDryRunIsRefused checks that no change runs
// but as the confirmation of a dry run of the same request: not without
// one, not for another event, group or subject than the dry run's.
func TestAConfirmationWithoutItsDryRunIsRefused(t *testing.T) {
	st := shop(time.Now())
	c := newClient(t, st, false)
	replayPlan := formFields(t, c.post("/replay-dry-run", url.Values{"key": {"stripe#evt_dead"}}).Body.String(), "replay").Get("plan")
	erasePlan := formFields(t, c.post("/erase-dry-run", url.Values{"subject": {"jane@example.com"}}).Body.String(), "erase").Get("plan")
	tests := []struct {
		name, path string
		form       url.Values
	}{
		{"replay without a dry run", "/replay", url.Values{"key": {"stripe#evt_dead"}}},
		{"replay with a made-up plan", "/replay", url.Values{"key": {"stripe#evt_dead"}, "plan": {"abc"}}},
		{"replay of another event", "/replay", url.Values{"key": {"stripe#evt_failed"}, "plan": {replayPlan}}},
		{"replay of the whole DLQ", "/replay", url.Values{"all": {"1"}, "plan": {replayPlan}}},
		{"erase without a dry run", "/erase", url.Values{"subject": {"jane@example.com"}}},
		{"erase of another subject", "/erase", url.Values{"subject": {"john@example.com"}, "plan": {erasePlan}}},
		{"erase with the replay's plan", "/erase", url.Values{"subject": {"jane@example.com"}, "plan": {replayPlan}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if w := c.post(tt.path, tt.form); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "does not follow a dry run") {
				t.Errorf("answered %d:\n%s", w.Code, w.Body)
			}
		})
	}
	for _, r := range st.replays {
		if !r.DryRun {
			t.Errorf("a replay ran: %+v", r)
		}
	}
	for _, e := range st.erases {
		if !e.DryRun {
			t.Errorf("an erasure ran: %+v", e)
		}
	}
}

func TestReplayOfAGroupOfTheDLQ(t *testing.T) {
	st := shop(time.Now())
	c := newClient(t, st, false)
	form := formFields(t, c.get("/parked").Body.String(), "replay-dry-run")
	dry := c.post("/replay-dry-run", form).Body.String()
	if !strings.Contains(dry, "hookinbox replay --all --type checkout.session.completed --reason &#39;create invoice: price unknown&#39; --stack test") {
		t.Errorf("the group's dry run does not show its command line:\n%s", dry)
	}
	loc := c.post("/replay", formFields(t, dry, "replay")).Header().Get("Location")
	if back := c.waitJob(loc); !strings.Contains(back, `href="parked">Back`) {
		t.Errorf("the change's page:\n%s", back)
	}
	want := replay.Request{All: true, EventType: "checkout.session.completed", Reason: "create invoice: price unknown"}
	if len(st.replays) != 2 || !cmp.Equal(st.replays[1], want) {
		t.Errorf("replays: %+v, want the dry run then %+v", st.replays, want)
	}
}

// TestOneChangeAtATime checks that a second change waits for the first:
// it is refused while the first runs, whose page shows its progress.
func TestOneChangeAtATime(t *testing.T) {
	st := shop(time.Now())
	release, told := make(chan struct{}), make(chan struct{})
	st.ReplayFn = func(ctx context.Context, req replay.Request, progress func(replay.Line)) (replay.Summary, error) {
		if req.DryRun {
			return replay.Summary{Moved: 1, Events: []replay.Line{{Key: "stripe#evt_dead", Outcome: replay.WouldReplay}}}, nil
		}
		progress(replay.Line{Key: "stripe#evt_dead", Outcome: replay.Replayed})
		close(told)
		<-release
		return replay.Summary{Moved: 1}, nil
	}
	c := newClient(t, st, false)
	dry := func() url.Values {
		return formFields(t, c.post("/replay-dry-run", url.Values{"key": {"stripe#evt_dead"}}).Body.String(), "replay")
	}
	first, second := dry(), dry()
	loc := c.post("/replay", first).Header().Get("Location")
	<-told
	running := c.get(loc).Body.String()
	if !strings.Contains(running, "running") || !strings.Contains(running, `data-refresh="1"`) || !strings.Contains(running, "<td>replayed</td>") {
		t.Errorf("the running change's page:\n%s", running)
	}
	if w := c.post("/replay", second); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "another change is running") {
		t.Errorf("a second change while the first runs: %d", w.Code)
	}
	if w := c.post("/replay-dry-run", url.Values{"key": {"stripe#evt_dead"}}); w.Code != http.StatusConflict {
		t.Errorf("a dry run while a change runs: %d", w.Code)
	}
	close(release)
	c.waitJob(loc)
}

// TestEraseIsADryRunThenAConfirmation checks an erasure: the dry run
// lists what would go; the confirmation erases, by the console's user,
// and its audit record shows on the page; the subject goes in no URL.
func TestEraseIsADryRunThenAConfirmation(t *testing.T) {
	st := shop(time.Now())
	c := newClient(t, st, false)
	dry := c.post("/erase-dry-run", url.Values{"subject": {"stripe:cus_123"}})
	if body := dry.Body.String(); dry.Code != http.StatusOK || !strings.Contains(body, "Would erase 1 stored copies of personal data in 1 events") {
		t.Fatalf("dry run answered %d:\n%s", dry.Code, body)
	}
	w := c.post("/erase", formFields(t, dry.Body.String(), "erase"))
	loc := w.Header().Get("Location")
	if w.Code != http.StatusSeeOther || strings.Contains(loc, "cus_123") {
		t.Fatalf("confirmation answered %d, Location %q", w.Code, loc)
	}
	if done := c.waitJob(loc); !strings.Contains(done, "Erased 1 stored copies of personal data in 1 events") {
		t.Errorf("the change's page:\n%s", done)
	}
	if len(st.erases) != 2 || !st.erases[0].DryRun || st.erases[1].DryRun || st.erases[1].By != "console:tester" || st.erases[1].Subjects[0] != "stripe:cus_123" {
		t.Errorf("erasures asked of the stack: %+v", st.erases)
	}
	if page := c.get("/personal").Body.String(); !strings.Contains(page, "console:tester") {
		t.Errorf("the audit record is not on the page:\n%s", page)
	}
	if w := c.post("/erase-dry-run", url.Values{"subject": {"nobody"}}); w.Code != http.StatusBadRequest {
		t.Errorf("a malformed subject: %d, want 400", w.Code)
	}
}

// TestReadOnlyServesNoChange checks --read-only: the routes of every
// change and of their dry runs do not exist, and no page offers one.
func TestReadOnlyServesNoChange(t *testing.T) {
	now := time.Now()
	st := shop(now)
	c := newClient(t, st, true)
	for _, path := range []string{"/replay-dry-run", "/replay", "/erase-dry-run", "/erase"} {
		if w := c.post(path, url.Values{"key": {"stripe#evt_dead"}, "all": {"1"}, "subject": {"jane@example.com"}}); w.Code != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, w.Code)
		}
	}
	if w := c.get("/job?id=anything"); w.Code != http.StatusNotFound {
		t.Errorf("GET /jobs/anything: %d, want 404", w.Code)
	}
	for _, path := range []string{"/events", "/event?key=stripe%23evt_dead", "/parked", "/destinations", "/health", "/personal"} {
		w := c.get(path)
		body := w.Body.String()
		if w.Code != http.StatusOK || strings.Contains(body, `action="replay`) || strings.Contains(body, `action="erase`) || !strings.Contains(body, "read-only") {
			t.Errorf("%s (%d) offers a change, or does not say it is read-only:\n%s", path, w.Code, body)
		}
	}
	// Reads that change nothing stay.
	if w := c.post("/export", url.Values{"subject": {"jane@example.com"}}); w.Code != http.StatusOK {
		t.Errorf("export: %d", w.Code)
	}
	if len(st.replays)+len(st.erases) != 0 {
		t.Errorf("asked of the stack: %v %v", st.replays, st.erases)
	}
	if it, _ := st.Get(context.Background(), "stripe#evt_dead"); it.Status != inbox.Dead {
		t.Errorf("status %s", it.Status)
	}
}
