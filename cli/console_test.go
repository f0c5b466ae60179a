package cli

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/console"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestConsoleUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--addr", "0.0.0.0:0"}, {"--addr", "example.com:4400"}, {"--addr", "4400"}, {"extra"},
	} {
		var ue *usageError
		if err := cmdConsole(context.Background(), args, io.Discard, io.Discard); !errors.As(err, &ue) {
			t.Errorf("console %q: %v, want a usage error", args, err)
		}
	}
}

// startConsole runs `hookinbox console args...` until the test ends and
// returns the URL it printed.
func startConsole(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut pipelinetest.SyncBuffer
	exited := make(chan error, 1)
	go func() { exited <- cmdConsole(ctx, args, &out, &errOut) }()
	t.Cleanup(func() {
		cancel()
		if err := <-exited; err != nil {
			t.Errorf("hookinbox console: %v\n%s", err, errOut.String())
		}
	})
	re := regexp.MustCompile(`hookinbox console: open (http://\S+)`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-exited:
			t.Fatalf("hookinbox console exited: %v\n%s", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("hookinbox console printed no URL:\n%s%s", out.String(), errOut.String())
		}
	}
}

// consoleUser is a browser on the console's URL: its cookie, and its
// forms' CSRF token.
type consoleUser struct {
	t    *testing.T
	base string // the printed URL without its last slash: pages are below it
	http *http.Client
	csrf string
}

// openConsole opens the URL the console printed, as a browser does.
func openConsole(t *testing.T, consoleURL string) *consoleUser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &consoleUser{t: t, base: strings.TrimSuffix(consoleURL, "/"), http: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	if code, body := c.get("/"); code != http.StatusOK || !strings.Contains(body, "Events") {
		t.Fatalf("opening %s: %d\n%s", consoleURL, code, body)
	}
	_, personal := c.get("/personal")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(personal)
	if m == nil {
		t.Fatalf("no CSRF token:\n%s", personal)
	}
	c.csrf = m[1]
	return c
}

func (c *consoleUser) get(path string) (int, string) {
	c.t.Helper()
	resp, err := c.http.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post submits a form with the CSRF token and returns the page it
// leads to.
func (c *consoleUser) post(path string, form url.Values) (int, string, string) {
	c.t.Helper()
	form.Set("csrf", c.csrf)
	resp, err := c.http.PostForm(c.base+path, form)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), strings.TrimPrefix(resp.Request.URL.String(), c.base)
}

// confirm submits the confirmation form a dry run's page holds and
// returns the change's page once the change is done.
func (c *consoleUser) confirm(dryRun, action string) string {
	c.t.Helper()
	i := strings.Index(dryRun, `action="`+action+`"`)
	if i < 0 {
		c.t.Fatalf("no confirmation posting to %s:\n%s", action, dryRun)
	}
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`).FindAllStringSubmatch(dryRun[i:strings.Index(dryRun[i:], "</form>")+i], -1) {
		form.Set(m[1], strings.NewReplacer("&#39;", "'", "&#34;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(m[2]))
	}
	code, page, path := c.post("/"+action, form)
	for deadline := time.Now().Add(30 * time.Second); strings.Contains(page, "data-refresh"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s still running:\n%s", path, page)
		}
		code, page = c.get(path)
	}
	if code != http.StatusOK || !strings.HasPrefix(path, "/job?id=") {
		c.t.Fatalf("confirming %s: %d at %s\n%s", action, code, path, page)
	}
	return page
}

// consoleFixture is a local stack with two events in the DLQ: one parked
// and indexed under a subject, the other finished since and erased; and
// its state file.
type consoleFixture struct {
	store          *inbox.DynamoDB
	events         *queue.Queue
	parked, erased webhook.Key
	state          string
}

func newConsoleFixture(t *testing.T) consoleFixture {
	t.Helper()
	emu, st := stackInEnv(t)
	ctx, now := context.Background(), time.Now()
	f := consoleFixture{store: inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"]), events: queue.New(emu.SQS(), st.Queues["EventsQueue"].URL)}
	dlq := queue.New(emu.SQS(), st.Queues["EventsDLQ"].URL)
	ev := func(id string) webhook.Event {
		return webhook.Event{Provider: "stripe", ID: id, Type: "checkout.session.completed", Created: now, Raw: []byte(`{"id":"` + id + `","email":"<b>ada@example.com</b>"}`)}
	}
	f.parked = parkDead(t, f.store, dlq, ev("evt_console_parked"), "create invoice: <price> unknown", 5, nil).Key
	// Parked, then run to its end (IGNORED) by a replay, and erased: an
	// erasure of an unfinished event waits for it to finish.
	f.erased = parkDead(t, f.store, dlq, ev("evt_console_erased"), "no customer email", 1, nil).Key
	if _, err := f.store.Lease(ctx, f.erased, "w", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Finish(ctx, f.erased, "w", inbox.Result{Status: inbox.Ignored, Outcome: "no handler", At: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.RemovePayload(ctx, f.erased, inbox.RemovedErased, now); err != nil {
		t.Fatal(err)
	}
	hashes, err := privacy.NewHasher(privacy.Keys{pipeline.SubjectKey}).Index(ctx, []provider.Subject{"email:ada@example.com"})
	if err == nil {
		err = f.store.IndexSubjects(ctx, f.parked, hashes, now.Add(time.Hour))
	}
	if err != nil {
		t.Fatal(err)
	}
	f.state = localStateFile(t, emu, st)
	return f
}

// status returns an event's status in the inbox.
func (f consoleFixture) status(key webhook.Key) inbox.Status {
	it, _ := f.store.Get(context.Background(), key)
	return it.Status
}

// TestConsoleOnTheLocalStack drives `hookinbox console` over HTTP, as a
// browser would, against a local stack with real events: the parked
// event's replay requeues it and sends its message; an erased event
// cannot be replayed; an erasure leaves its audit record, and waits for
// the unfinished event; read-only serves no change.
func TestConsoleOnTheLocalStack(t *testing.T) {
	f := newConsoleFixture(t)
	c := openConsole(t, startConsole(t, "--state-file", f.state))
	if _, page := c.get("/events"); !strings.Contains(page, "stripe#evt_console_parked") || !strings.Contains(page, "create invoice: &lt;price&gt; unknown") {
		t.Errorf("the Events page does not list the parked event:\n%s", page)
	}
	if _, page, _ := c.post("/subject", url.Values{"subject": {"ADA@example.com"}}); !strings.Contains(page, "stripe#evt_console_parked") || strings.Contains(page, "evt_console_erased") {
		t.Errorf("the subject's events:\n%s", page)
	}
	_, dry, _ := c.post("/replay-dry-run", url.Values{"key": {"evt_console_erased"}})
	if !strings.Contains(dry, "erased at its subject&#39;s request") || strings.Contains(dry, `action="replay"`) {
		t.Errorf("dry run of the erased event's replay:\n%s", dry)
	}
	_, dry, _ = c.post("/replay-dry-run", url.Values{"key": {"stripe#evt_console_parked"}})
	if st := f.status(f.parked); st != inbox.Dead || !strings.Contains(dry, "would replay") {
		t.Fatalf("after the dry run: %s\n%s", st, dry)
	}
	if done := c.confirm(dry, "replay"); !strings.Contains(done, "1 replayed") {
		t.Errorf("the replay's page:\n%s", done)
	}
	if st := f.status(f.parked); st != inbox.Failed {
		t.Errorf("after the replay: %s, want FAILED (requeued for the processor)", st)
	}
	if sent := pipelinetest.Peek(t, f.events); len(sent) != 1 || !strings.Contains(sent[0].Body, "evt_console_parked") {
		t.Errorf("the events queue holds %v, want the replayed event's message", sent)
	}
	if st := f.status(f.erased); st != inbox.Ignored {
		t.Errorf("the erased event: %s, want it left IGNORED", st)
	}
	checkErasure(t, c, f)
	ro := openConsole(t, startConsole(t, "--state-file", f.state, "--read-only"))
	if code, _, _ := ro.post("/replay-dry-run", url.Values{"key": {"stripe#evt_console_parked"}}); code != http.StatusNotFound {
		t.Errorf("read-only: a replay's dry run answered %d, want 404", code)
	}
}

// checkErasure erases the fixture's subject from the console, and finds
// its audit record, and its event, unfinished (replayed), marked to be
// erased once it finishes, as its page says.
func checkErasure(t *testing.T, c *consoleUser, f consoleFixture) {
	t.Helper()
	_, dry, _ := c.post("/erase-dry-run", url.Values{"subject": {"ada@example.com"}})
	if done := c.confirm(dry, "erase"); !strings.Contains(done, "in 1 events") {
		t.Errorf("the erasure's page:\n%s", done)
	}
	audit, err := f.store.Erasures(context.Background())
	if err != nil || len(audit) != 1 || !strings.HasPrefix(audit[0].By, "console:") || audit[0].Events != 1 {
		t.Fatalf("audit records %+v, %v", audit, err)
	}
	if it, _ := f.store.Get(context.Background(), f.parked); it.PayloadRemoved != "" || !it.EraseWhenFinished {
		t.Errorf("after the erasure: payload %q, erased when finished %v; want kept until the event finishes", it.PayloadRemoved, it.EraseWhenFinished)
	}
	if _, page := c.get("/event?key=stripe%23evt_console_parked"); !strings.Contains(page, "erasure waiting") {
		t.Errorf("the event's page does not say an erasure waits for it:\n%s", page)
	}
	if _, page := c.get("/personal"); !strings.Contains(page, audit[0].By) {
		t.Errorf("the Personal data page does not show the audit record:\n%s", page)
	}
}

// TestConsoleClientsRefuseWhatTheirCommandWouldNot checks the
// allow-lists: the pages' clients only read, the dry runs' only read and
// peek, and a read-only console has no client that writes.
func TestConsoleClientsRefuseWhatTheirCommandWouldNot(t *testing.T) {
	emu, st := stackInEnv(t)
	sf := addStackFlags(newFlagSet("console", "", ""))
	sf.stateFile = localStateFile(t, emu, st)
	ctx := context.Background()
	for _, readOnly := range []bool{false, true} {
		c, _, err := newConsoleStack(ctx, sf, io.Discard, readOnly)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.read.store().Requeue(ctx, "stripe#evt_x", time.Now()); !errors.Is(err, errNotAllowed) {
			t.Errorf("read-only %v: the pages' client wrote: %v", readOnly, err)
		}
		if err := queue.New(sqs.NewFromConfig(c.peek.cfg), c.peek.queueURL).Send(ctx, queue.Envelope{Key: "stripe#evt_x"}); !errors.Is(err, errNotAllowed) {
			t.Errorf("read-only %v: the dry runs' client sent: %v", readOnly, err)
		}
		if readOnly != (c.write == nil) {
			t.Errorf("read-only %v: a client that writes: %v", readOnly, c.write != nil)
		}
	}
}

// pipelineState writes the state file of a pipelinetest stack, as
// hookinbox dev writes its own, and returns its path.
func pipelineState(t *testing.T, p *pipelinetest.Pipeline) string {
	t.Helper()
	path := localStateFile(t, p.Emulators, p.Stack.Stack)
	st, err := loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	st.MetricsFile = p.MetricsFile()
	if err := writeState(path, st); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConsoleCallsAreTheDocumentedOnes runs every page and change of the
// console on a local stack, recording each AWS call by the client that
// made it, and checks that docs/console.md lists it: the pages' and the
// DLQ's reads among the read-only mode's actions, a change's and an
// erasure's dry run among the full mode's.
func TestConsoleCallsAreTheDocumentedOnes(t *testing.T) {
	f := newConsoleFixture(t)
	sf := addStackFlags(newFlagSet("console", "", ""))
	sf.stateFile = f.state
	st, where, err := newConsoleStack(context.Background(), sf, io.Discard, false)
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]map[string]bool{"read-only": {}, "full": {}}
	var mu sync.Mutex
	for mode, ts := range map[string][]*target{"read-only": {st.read, st.peek}, "full": {st.peek, st.write}} {
		for _, tg := range ts {
			tg.cfg.APIOptions = append(tg.cfg.APIOptions, func(s *middleware.Stack) error {
				return s.Initialize.Add(middleware.InitializeMiddlewareFunc("record", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					mu.Lock()
					made[mode][iamAction(middleware.GetServiceID(ctx), middleware.GetOperationName(ctx))] = true
					mu.Unlock()
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
			})
		}
	}
	c := openConsole(t, serveTestConsole(t, st, where))
	for _, path := range []string{"/events", "/event?key=stripe%23evt_console_parked", "/parked", "/destinations", "/health", "/personal"} {
		if code, page := c.get(path); code != http.StatusOK {
			t.Errorf("%s: %d\n%s", path, code, page)
		}
	}
	c.post("/subject", url.Values{"subject": {"ada@example.com"}})
	c.post("/export", url.Values{"subject": {"ada@example.com"}})
	_, dry, _ := c.post("/replay-dry-run", url.Values{"key": {"stripe#evt_console_parked"}})
	c.confirm(dry, "replay")
	_, dry, _ = c.post("/replay-dry-run", url.Values{"all": {"1"}})
	c.confirm(dry, "replay")
	checkErasure(t, c, f)
	documented := documentedActions(t)
	for mode, actions := range made {
		for a := range actions {
			if !documented[mode][a] && !(mode == "full" && documented["read-only"][a]) {
				t.Errorf("the console called %s in %s mode; docs/console.md does not list it", a, mode)
			}
		}
	}
	if !made["full"]["dynamodb:UpdateItem"] || !made["read-only"]["sqs:ReceiveMessage"] {
		t.Errorf("recorded %v: is the recording broken?", made)
	}
}

// serveTestConsole serves the console of st on a free loopback port
// until the test ends and returns its URL.
func serveTestConsole(t *testing.T, st *consoleStack, where string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := console.New(console.Config{Addr: ln.Addr().String(), Where: where, By: "console:test"}, st)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveConsole(ctx, ln, srv) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return srv.URL()
}

// iamAction is the IAM action of an SDK operation of a service.
func iamAction(service, operation string) string {
	prefix := strings.ToLower(strings.ReplaceAll(service, " ", ""))
	if prefix == "s3" && operation == "HeadObject" {
		operation = "GetObject"
	}
	return prefix + ":" + operation
}

// documentedActions returns the IAM actions docs/console.md lists for
// each mode: the table rows that start with the mode.
func documentedActions(t *testing.T) map[string]map[string]bool {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "console.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{"read-only": {}, "full": {}}
	action := regexp.MustCompile("`([a-z0-9]+:[A-Za-z]+)`")
	for _, line := range strings.Split(string(page), "\n") {
		for mode := range out {
			if strings.HasPrefix(line, "| "+mode+" |") {
				for _, m := range action.FindAllStringSubmatch(line, -1) {
					out[mode][m[1]] = true
				}
			}
		}
	}
	if len(out["read-only"]) == 0 || len(out["full"]) == 0 {
		t.Fatalf("docs/console.md has no rows \"| read-only |\" and \"| full |\" listing IAM actions: %v", out)
	}
	return out
}

// metricDataFn answers GetMetricData with a function.
type metricDataFn func(*cloudwatch.GetMetricDataInput) *cloudwatch.GetMetricDataOutput

func (f metricDataFn) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	return f(in), nil
}

// TestCloudWatchMetricsBucketsByTimestamp checks the charts' and the
// destinations' reads of CloudWatch: one query per metric, with its
// dimensions, statistic and the span's step as period, and each value
// in the bucket of its timestamp.
func TestCloudWatchMetricsBucketsByTimestamp(t *testing.T) {
	from := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	span := console.Span{From: from, Step: 15 * time.Minute, Buckets: 4}
	var got *cloudwatch.GetMetricDataInput
	cw := metricDataFn(func(in *cloudwatch.GetMetricDataInput) *cloudwatch.GetMetricDataOutput {
		got = in
		return &cloudwatch.GetMetricDataOutput{MetricDataResults: []cwtypes.MetricDataResult{
			{Id: aws.String("m0"), Timestamps: []time.Time{from, from.Add(30 * time.Minute), from.Add(31 * time.Minute)}, Values: []float64{1, 2, 3}},
			{Id: aws.String("m1"), Timestamps: []time.Time{from.Add(45 * time.Minute)}, Values: []float64{250}},
		}}
	})
	vals, err := cloudWatchMetrics(context.Background(), cw, "hookinbox/shop", span, []console.MetricQuery{
		{Name: metrics.Received}, {Name: metrics.DestinationLatency, Stat: "p99", Dims: map[string]string{metrics.DimDestination: "crm"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float64{{1, 0, 5, 0}, {0, 0, 0, 250}}, vals); diff != "" {
		t.Errorf("values per bucket (-want +got):\n%s", diff)
	}
	q := got.MetricDataQueries[1].MetricStat
	if aws.ToString(q.Stat) != "p99" || aws.ToInt32(q.Period) != 900 || len(q.Metric.Dimensions) != 1 || aws.ToString(q.Metric.Dimensions[0].Value) != "crm" ||
		aws.ToString(got.MetricDataQueries[0].MetricStat.Stat) != "Sum" || !aws.ToTime(got.EndTime).Equal(from.Add(time.Hour)) {
		t.Errorf("queries %+v", got)
	}
}

func TestLineMetricsComputeCloudWatchsStatistics(t *testing.T) {
	from := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	line := func(at time.Duration, v float64, dest string) emf.Line {
		return emf.Line{Time: from.Add(at), Values: map[string]float64{metrics.DestinationLatency: v}, Dims: map[string]string{metrics.DimDestination: dest}}
	}
	lines := []emf.Line{line(time.Minute, 10, "crm"), line(2*time.Minute, 30, "crm"), line(3*time.Minute, 99, "erp"), line(-time.Minute, 1000, "crm")}
	d := map[string]string{metrics.DimDestination: "crm"}
	got := lineMetrics(lines, console.Span{From: from, Step: time.Hour, Buckets: 1}, []console.MetricQuery{
		{Name: metrics.DestinationLatency, Stat: "Sum", Dims: d}, {Name: metrics.DestinationLatency, Stat: "Average", Dims: d},
		{Name: metrics.DestinationLatency, Stat: "Maximum"}, {Name: metrics.DestinationLatency, Stat: "p99", Dims: d},
	})
	if diff := cmp.Diff([][]float64{{40}, {20}, {99}, {30}}, got); diff != "" {
		t.Errorf("statistics (-want +got):\n%s", diff)
	}
}
