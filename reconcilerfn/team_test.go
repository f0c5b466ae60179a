package reconcilerfn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// A team's own provider does what a built-in does (docs/adopting.md): the
// receiver verifies its thin notification, the processor fetches the
// event it points at through the provider's Fetch, and the reconciler,
// with the provider handed to reconcilerfn.Builder as the team's main
// hands it to reconcilerfn.Run, lists the acme API's events: the one that
// never arrived is claimed under acme#<id>, enqueued and processed once;
// the one delivered is neither fetched by the source (it asked Env.Inbox)
// nor claimed again; the run's report says so, as Lambda returns it; a
// second run claims nothing.
func TestATeamsProviderIsFetchedAndReconciledAsABuiltIn(t *testing.T) {
	ctx := context.Background()
	const apiKey, secret = "acme_key_local", "acme-webhook-secret-local"
	api := startAcmeAPI(t, apiKey)
	now := time.Now().UTC().Truncate(time.Second)
	api.add("ev_delivered", "order.paid", now.Add(-20*time.Minute), `{"order":"1001"}`)
	api.add("ev_missed", "order.paid", now.Add(-15*time.Minute), `{"order":"1002"}`)
	delivered, missed := webhook.NewKey(acmeName, "ev_delivered"), webhook.NewKey(acmeName, "ev_missed")

	settings := map[string]string{"ACME_API_URL": api.URL, "ACME_API_KEY": apiKey}
	biz := &acmeBusiness{seen: map[string][]string{}}
	p := pipelinetest.NewWith(t, pipelinetest.Options{
		Processor:    processorfn.Builder(biz.build, acmeProvider{}),
		ProcessorEnv: settings,
		Providers:    []provider.Provider{acmeProvider{}},
	})
	// hookinbox's template declares no ACME_WEBHOOK_SECRET: a team's
	// business.yaml would (Receiver: Environment:).
	p.Receive = p.Build(t, "ReceiverFunction", map[string]string{"ACME_WEBHOOK_SECRET": secret}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))

	note := fmt.Appendf(nil, `{"id":"ev_delivered","type":"order.paid","created":%q}`, now.Add(-20*time.Minute).Format(time.RFC3339))
	req, err := acmeSender().Sign(sample.Event{Body: note}, []string{secret}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if resp := p.Send(t, lambdalocal.Delivery(acmeName, req)); resp.StatusCode != 200 {
		t.Fatalf("receiver: %d %s", resp.StatusCode, resp.Body)
	}
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{delivered}) })
	if got, want := biz.raws("ev_delivered"), []string{api.body("ev_delivered")}; !slices.Equal(got, want) {
		t.Fatalf("the business saw %q of the delivered notification, want the event the processor fetches (Fetch): %q", got, want)
	}

	run := reconcilerOf(t, p, maps.Clone(settings))
	sum := run(ctx)
	acme := sum.provider(t, acmeName)
	if acme.Listed != 1 || acme.Missed != 1 || acme.Errors != 0 {
		t.Errorf("acme source: %+v, want the missed event alone listed and claimed, no error", acme)
	}
	want := provider.Line{Key: missed.String(), Type: "order.paid", Outcome: provider.Claimed,
		Note: "created " + now.Add(-15*time.Minute).Format(time.RFC3339) + "; never arrived as a webhook"}
	if got := sum.linesOf(acmeName); len(got) != 1 || got[0] != want {
		t.Errorf("report lines of acme: %+v, want only %+v", got, want)
	}
	if got := queuedKeys(t, p); !slices.Equal(got, []webhook.Key{missed}) {
		t.Errorf("enqueued by the reconciler: %v, want %s alone", got, missed)
	}
	if it, err := p.Inbox.Get(ctx, missed); err != nil || it.Status != inbox.Received || it.EventType != "order.paid" {
		t.Errorf("%s after the run: %+v, %v; want claimed (RECEIVED) as order.paid", missed, it, err)
	}

	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{missed}) })
	for _, k := range []webhook.Key{delivered, missed} {
		if it, err := p.Inbox.Get(ctx, k); err != nil || it.Status != inbox.Done || it.Attempts != 1 {
			t.Errorf("%s: %+v, %v; want DONE after one attempt", k, it, err)
		}
		if got, want := biz.raws(k.EventID()), []string{api.body(k.EventID())}; !slices.Equal(got, want) {
			t.Errorf("%s: the business saw %q, want the API's event once: %q", k, got, want)
		}
	}
	// The delivered event was fetched once, by the processor; the missed
	// one once, by the source, which claimed it whole.
	if got := api.fetches(); got["ev_delivered"] != 1 || got["ev_missed"] != 1 {
		t.Errorf("API fetches by event: %v, want one each", got)
	}

	again := run(ctx)
	if acme := again.provider(t, acmeName); acme.Listed != 0 || acme.Missed != 0 || acme.Errors != 0 {
		t.Errorf("second run's acme source: %+v, want nothing", acme)
	}
	if got := again.linesOf(acmeName); len(got) != 0 {
		t.Errorf("second run's report lines of acme: %+v", got)
	}
	if got := queuedKeys(t, p); len(got) != 0 {
		t.Errorf("enqueued by the second run: %v", got)
	}
	if got := api.fetches(); got["ev_delivered"] != 1 || got["ev_missed"] != 1 {
		t.Errorf("API fetches after the second run: %v, want still one each", got)
	}
}

// The provider above is written on hookinbox's public packages alone, as
// a team's, in its own module, is.
func TestTeamProviderImports(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "acme_test.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal") {
			t.Errorf("acme_test.go imports %s: a team's provider cannot", path)
		}
	}
}

// report is what a reconciler run returns to Lambda, read as a team reads
// it: its JSON.
type report struct {
	Events    []provider.Line `json:"events"`
	Errors    []string        `json:"errors"`
	Providers []sourceRun     `json:"providers"`
}

// sourceRun is what one provider's source did in a run.
type sourceRun struct {
	Provider               string
	Listed, Missed, Errors int
}

func (r report) provider(t *testing.T, name string) sourceRun {
	t.Helper()
	for _, pr := range r.Providers {
		if pr.Provider == name {
			return pr
		}
	}
	t.Fatalf("the run has no %s source: %+v (errors %q)", name, r.Providers, r.Errors)
	return sourceRun{}
}

// linesOf returns the report's lines of the provider name's events.
func (r report) linesOf(name string) []provider.Line {
	var out []provider.Line
	for _, l := range r.Events {
		if strings.HasPrefix(l.Key, name+"#") {
			out = append(out, l)
		}
	}
	return out
}

// reconcilerOf builds p's ReconcilerFunction (reconcilerfn.Builder with
// the team's provider) with env over the stack's, and returns a run of it
// on a scheduled event, invoked as Lambda invokes it.
func reconcilerOf(t *testing.T, p *pipelinetest.Pipeline, env map[string]string) func(context.Context) report {
	t.Helper()
	env["ACME_RECONCILE_LOOKBACK"] = "1h"
	h := lambda.NewHandler(p.Build(t, "ReconcilerFunction", env))
	return func(ctx context.Context) report {
		t.Helper()
		out, err := h.Invoke(ctx, []byte(`{"source":"aws.events","detail-type":"Scheduled Event"}`))
		if err != nil {
			t.Fatalf("reconciler: %v", err)
		}
		var r report
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("reconciler's answer %s: %v", out, err)
		}
		return r
	}
}

// queuedKeys returns the keys of the events queue's messages, sorted, and
// leaves them there.
func queuedKeys(t *testing.T, p *pipelinetest.Pipeline) []webhook.Key {
	t.Helper()
	var keys []webhook.Key
	for _, m := range pipelinetest.Peek(t, p.Events) {
		env, err := queue.ParseEnvelope(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, env.Key)
	}
	slices.Sort(keys)
	return keys
}

// acmeBusiness records the payload of every acme event it handles.
type acmeBusiness struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (b *acmeBusiness) build(context.Context, aws.Config, func(string) string) (processorfn.Business, error) {
	return processorfn.NewMux().On(acmeName, func(_ context.Context, ev webhook.Event, _ effects.Runner) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.seen[ev.ID] = append(b.seen[ev.ID], string(ev.Raw))
		return nil
	}, "order.paid"), nil
}

func (b *acmeBusiness) raws(id string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.seen[id])
}

// acmeServer is the acme system's API on 127.0.0.1: its events, listed and
// served whole to the bearer of key, each fetch counted.
type acmeServer struct {
	*httptest.Server
	mu     sync.Mutex
	events []acmeStored
	served map[string]int
}

type acmeStored struct {
	acmeListed
	data string
}

func startAcmeAPI(t *testing.T, key string) *acmeServer {
	s := &acmeServer{served: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if id, ok := strings.CutPrefix(r.URL.Path, "/v1/events/"); ok {
			for _, ev := range s.events {
				if ev.ID == id {
					s.served[id]++
					_, _ = w.Write([]byte(s.whole(ev)))
					return
				}
			}
			http.NotFound(w, r)
			return
		}
		from, err1 := time.Parse(time.RFC3339, r.URL.Query().Get("from"))
		to, err2 := time.Parse(time.RFC3339, r.URL.Query().Get("to"))
		if r.URL.Path != "/v1/events" || err1 != nil || err2 != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		listed := []acmeListed{}
		for _, ev := range s.events {
			if !ev.Created.Before(from) && ev.Created.Before(to) {
				listed = append(listed, ev.acmeListed)
			}
		}
		_ = json.NewEncoder(w).Encode(listed)
	}))
	t.Cleanup(s.Close)
	return s
}

// add makes an event the API lists and serves, oldest first.
func (s *acmeServer) add(id, typ string, created time.Time, data string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, acmeStored{acmeListed{ID: id, Type: typ, Created: created}, data})
}

func (s *acmeServer) whole(ev acmeStored) string {
	return fmt.Sprintf(`{"id":%q,"type":%q,"created":%q,"data":%s}`, ev.ID, ev.Type, ev.Created.Format(time.RFC3339), ev.data)
}

// body returns the event id as the API serves it.
func (s *acmeServer) body(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.events {
		if ev.ID == id {
			return s.whole(ev)
		}
	}
	return ""
}

func (s *acmeServer) fetches() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.served)
}
