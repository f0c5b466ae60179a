package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/console"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// fakeStack is a stack in memory: events, a DLQ, and a record of the
// replays and erasures asked for. ReplayFn, when set, answers a replay.
type fakeStack struct {
	mu       sync.Mutex
	events   map[webhook.Key]console.Event
	dlq      *fakeDLQ
	replays  []replay.Request
	erases   []privacy.Request
	erasures []inbox.Erasure
	logs     map[webhook.Key][]destination.Attempts
	subjects map[string][]webhook.Key // hash → events
	health   console.Health
	dests    []string

	ReplayFn func(ctx context.Context, req replay.Request, progress func(replay.Line)) (replay.Summary, error)
}

func newFake(evs ...console.Event) *fakeStack {
	f := &fakeStack{events: map[webhook.Key]console.Event{}, dlq: &fakeDLQ{}, logs: map[webhook.Key][]destination.Attempts{}, subjects: map[string][]webhook.Key{}}
	for _, ev := range evs {
		f.events[ev.Item.Key] = ev
	}
	return f
}

// event returns an event in status st, last active at.
func event(key string, typ string, st inbox.Status, at time.Time) console.Event {
	it := inbox.Item{Key: webhook.Key(key), Provider: webhook.Key(key).Provider(), EventType: typ, Status: st,
		ReceivedAt: at.Add(-time.Second), EnqueuedAt: at, Attempts: 1}
	if st.Final() {
		it.ProcessedAt = at
	}
	return console.Event{Item: it, Payload: []byte(`{"id":"` + webhook.Key(key).EventID() + `","object":"event"}`)}
}

func (f *fakeStack) Recent(_ context.Context, q inbox.RecentQuery) ([]inbox.Item, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []inbox.Item
	for _, ev := range f.events {
		it := ev.Item
		in := it.Status == inbox.Done || it.Status == inbox.Ignored
		if it.Status == inbox.Dead || !(in && q.Finished || !it.Status.Final() && q.Unfinished) ||
			q.Provider != "" && it.Provider != q.Provider || !q.Lists(it) {
			continue
		}
		it.Payload = nil
		out = append(out, it)
	}
	slices.SortFunc(out, inbox.Latest)
	limit := q.Limit
	if limit == 0 {
		limit = 50
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

func (f *fakeStack) Find(_ context.Context, s string) (webhook.Key, error) {
	if !strings.Contains(s, "#") {
		s = "stripe#" + s
	}
	return webhook.ParseKey(s)
}

func (f *fakeStack) Get(_ context.Context, key webhook.Key) (inbox.Item, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev, ok := f.events[key]
	if !ok {
		return inbox.Item{}, fmt.Errorf("get %s: %w", key, inbox.ErrNotFound)
	}
	return ev.Item, nil
}

func (f *fakeStack) Event(_ context.Context, key webhook.Key) (console.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev, ok := f.events[key]
	if !ok {
		return console.Event{}, fmt.Errorf("get %s: %w", key, inbox.ErrNotFound)
	}
	return ev, nil
}

func (f *fakeStack) DeliveryLog(_ context.Context, key webhook.Key) ([]destination.Attempts, error) {
	return f.logs[key], nil
}

// hashOf is the fake's subject hash: not the subject.
func hashOf(s provider.Subject) string { return fmt.Sprintf("h%x", []byte(s))[:12] + "f00d" }

func (f *fakeStack) SubjectHashes(_ context.Context, s provider.Subject) ([]string, error) {
	return []string{hashOf(s)}, nil
}

func (f *fakeStack) SubjectEvents(_ context.Context, hashes []string, limit int) ([]webhook.Key, error) {
	var out []webhook.Key
	for _, h := range hashes {
		out = append(out, f.subjects[h]...)
	}
	return out[:min(len(out), limit)], nil
}

func (f *fakeStack) DLQ() console.DeadLetters { return f.dlq }

func (f *fakeStack) Replay(ctx context.Context, req replay.Request, progress func(replay.Line)) (replay.Summary, error) {
	f.mu.Lock()
	f.replays = append(f.replays, req)
	f.mu.Unlock()
	if f.ReplayFn != nil {
		return f.ReplayFn(ctx, req, progress)
	}
	s := replay.Summary{DryRun: req.DryRun, Moved: 1}
	l := replay.Line{Key: "stripe#evt_1", Outcome: replay.Replayed, Status: "DEAD"}
	if req.DryRun {
		l.Outcome = replay.WouldReplay
	} else if progress != nil {
		progress(l)
	}
	s.Events = []replay.Line{l}
	return s, nil
}

func (f *fakeStack) Health(context.Context) (console.Health, error) { return f.health, nil }

func (f *fakeStack) Metrics(_ context.Context, span console.Span, qs []console.MetricQuery) ([][]float64, error) {
	out := make([][]float64, len(qs))
	for i := range qs {
		out[i] = make([]float64, span.Buckets)
		for b := range out[i] {
			out[i][b] = float64(b % 4)
		}
	}
	return out, nil
}

func (f *fakeStack) Destinations(context.Context) ([]string, error) { return f.dests, nil }

func (f *fakeStack) Export(_ context.Context, subjects []provider.Subject) (privacy.Report, error) {
	return privacy.Report{SubjectHash: hashOf(subjects[0]), Events: []privacy.EventReport{{Key: "stripe#evt_pii", Type: "customer.created", Status: inbox.Done, Where: []string{"inline"}}}, Copies: 1}, nil
}

func (f *fakeStack) Erase(ctx context.Context, req privacy.Request) (privacy.Report, error) {
	f.mu.Lock()
	f.erases = append(f.erases, req)
	if !req.DryRun {
		f.erasures = append(f.erasures, inbox.Erasure{At: time.Now(), By: req.By, SubjectHash: hashOf(req.Subjects[0]), Events: 1, Copies: 1})
	}
	f.mu.Unlock()
	return f.Export(ctx, req.Subjects)
}

func (f *fakeStack) Erasures(context.Context) ([]inbox.Erasure, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.erasures), nil
}

// fakeDLQ is a DLQ in memory that records what is hidden and released.
type fakeDLQ struct {
	mu       sync.Mutex
	msgs     []queue.Message
	hidden   map[string]bool
	receives int
}

// park adds a parked message of an event, as the processor parks it.
func (d *fakeDLQ) park(key webhook.Key, typ, reason string, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	body := queue.Envelope{Key: key, Type: typ}.Marshal()
	d.msgs = append(d.msgs, queue.Message{ID: fmt.Sprintf("m%d", len(d.msgs)), Body: body, ReceiptHandle: fmt.Sprintf("r%d", len(d.msgs)),
		Attributes: map[string]string{queue.AttrReason: reason, queue.AttrEventType: typ, queue.AttrAttempts: "5", queue.AttrParkedAt: at.UTC().Format(time.RFC3339)}})
}

func (d *fakeDLQ) Receive(_ context.Context, max int, _, _ time.Duration) ([]queue.Message, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.receives++
	if d.hidden == nil {
		d.hidden = map[string]bool{}
	}
	var out []queue.Message
	for _, m := range d.msgs {
		if len(out) < max && !d.hidden[m.ReceiptHandle] {
			d.hidden[m.ReceiptHandle] = true
			out = append(out, m)
		}
	}
	return out, nil
}

func (d *fakeDLQ) Release(_ context.Context, rh string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.hidden, rh)
	return nil
}

func (d *fakeDLQ) Depth(context.Context) (queue.Depth, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return queue.Depth{Visible: len(d.msgs) - len(d.hidden), InFlight: len(d.hidden)}, nil
}

// take removes the first n messages, as a replay or a redrive that moves
// them elsewhere does.
func (d *fakeDLQ) take(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.msgs[:n] {
		delete(d.hidden, m.ReceiptHandle)
	}
	d.msgs = d.msgs[n:]
}

// stillHidden is how many messages a read left hidden.
func (d *fakeDLQ) stillHidden() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.hidden)
}

// testAddr is where the tests' consoles say they listen.
const testAddr = "127.0.0.1:4400"

// client is a browser that opened the console's URL: it asks for pages
// below that URL, with the cookie, and its forms carry the CSRF token.
type client struct {
	t      *testing.T
	srv    *console.Server
	base   string // the URL's path, the token's: "/<token>"
	cookie *http.Cookie
	csrf   string
}

// newClient returns the console of stack st and a browser signed in to it.
func newClient(t *testing.T, st *fakeStack, readOnly bool) *client {
	t.Helper()
	srv, err := console.New(console.Config{Addr: testAddr, Where: "test stack", StackArgs: " --stack test", ReadOnly: readOnly,
		Providers: []string{"stripe", "github"}, By: "console:tester"}, st)
	if err != nil {
		t.Fatal(err)
	}
	return signIn(t, srv)
}

// signIn opens the URL of srv as a browser does.
func signIn(t *testing.T, srv *console.Server) *client {
	t.Helper()
	u, _ := url.Parse(srv.URL())
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, request("GET", u.Path, nil))
	if w.Code != http.StatusSeeOther || len(w.Result().Cookies()) != 1 {
		t.Fatalf("opening the console's URL: %d %v", w.Code, w.Result().Cookies())
	}
	c := &client{t: t, srv: srv, base: strings.TrimSuffix(u.Path, "/"), cookie: w.Result().Cookies()[0]}
	page := c.get("/personal")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page.Body.String())
	if m == nil {
		t.Fatalf("no CSRF token in the personal page:\n%s", page.Body)
	}
	c.csrf = m[1]
	return c
}

// request is a request to the console as a browser on this machine
// sends it.
func request(method, target string, form url.Values) *http.Request {
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", "http://"+testAddr)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	r.Host = testAddr
	return r
}

func (c *client) do(r *http.Request) *httptest.ResponseRecorder {
	c.t.Helper()
	r.AddCookie(c.cookie)
	w := httptest.NewRecorder()
	c.srv.ServeHTTP(w, r)
	return w
}

// get reads the page at path below the console's URL: "/events", or
// "job?id=..." as a Location names it.
func (c *client) get(path string) *httptest.ResponseRecorder {
	c.t.Helper()
	return c.do(request("GET", c.at(path), nil))
}

// post sends a form with the CSRF token.
func (c *client) post(path string, form url.Values) *httptest.ResponseRecorder {
	c.t.Helper()
	form.Set("csrf", c.csrf)
	return c.do(request("POST", c.at(path), form))
}

// at returns the path of a page below the console's URL.
func (c *client) at(path string) string {
	return c.base + "/" + strings.TrimPrefix(path, "/")
}

// formFields returns the hidden fields of the form that posts to action.
func formFields(t *testing.T, page, action string) url.Values {
	t.Helper()
	i := strings.Index(page, `action="`+action+`"`)
	if i < 0 {
		t.Fatalf("no form posting to %s in:\n%s", action, page)
	}
	form := page[i:]
	form = form[:strings.Index(form, "</form>")]
	out := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`).FindAllStringSubmatch(form, -1) {
		out.Set(m[1], htmlUnescape(m[2]))
	}
	return out
}

// htmlUnescape undoes html/template's escaping of an attribute value.
func htmlUnescape(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">", "&amp;", "&", "&#43;", "+").Replace(s)
}

// waitJob reads a change's page until it is done (its page stops
// refreshing itself) and returns it.
func (c *client) waitJob(path string) string {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		body := c.get(path).Body.String()
		if !strings.Contains(body, "data-refresh") {
			return body
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s still running after 10 s:\n%s", path, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
