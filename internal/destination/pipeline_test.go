package destination_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/internal/stacktemplate"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

const (
	sinkSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	sinkSecretARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:sink-AbCdEf"
)

// sink is a destination on 127.0.0.1 that answers with the statuses it
// is given in turn (200 once they run out) and keeps what it received.
type sink struct {
	mu        sync.Mutex
	statuses  []int
	otherwise int           // the status once statuses run out; 0: 200
	delay     time.Duration // before each answer
	got       []delivery
	bodies    [][]byte // by delivery, as received
	srv       *httptest.Server
}

type delivery struct {
	ID, Type string
	Verified bool // the signature, and a body with its id, key and received time
}

func newSink(t *testing.T, statuses ...int) *sink {
	t.Helper()
	return startSink(t, &sink{statuses: statuses})
}

func startSink(t *testing.T, s *sink) *sink {
	t.Helper()
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		time.Sleep(s.delay)
		hdr := map[string]string{}
		for k := range r.Header {
			hdr[strings.ToLower(k)] = r.Header.Get(k)
		}
		_, err := (&standard.Verifier{Secrets: []string{sinkSecret}}).Verify(r.Context(), webhook.Request{Method: "POST", Header: hdr, Body: body})
		var b destination.Body
		_ = json.Unmarshal(body, &b)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.got = append(s.got, delivery{ID: r.Header.Get("webhook-id"), Type: b.Type, Verified: err == nil && b.ID == r.Header.Get("webhook-id") && b.ReceivedAt != "" && b.Key != ""})
		s.bodies = append(s.bodies, body)
		code := cmp.Or(s.otherwise, 200)
		if len(s.statuses) > 0 {
			code, s.statuses = s.statuses[0], s.statuses[1:]
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) deliveries() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]delivery(nil), s.got...)
}

// payloads returns the payload bytes of each delivery by webhook-id (the
// last, when it came more than once): the body after its first
// "payload":, less the final }.
func (s *sink) payloads() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]byte{}
	for i, b := range s.bodies {
		if at := bytes.Index(b, []byte(`"payload":`)); at >= 0 && len(b) > 0 {
			out[s.got[i].ID] = b[at+len(`"payload":`) : len(b)-1]
		}
	}
	return out
}

func (s *sink) answer(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = statuses
}

// withDestinations returns the pipeline whose processor delivers to cfgs,
// their secret sinkSecret, and retries after at most a second.
func withDestinations(t testing.TB, cfgs []destination.Config) *pipelinetest.Pipeline {
	t.Helper()
	raw, _ := json.Marshal(cfgs)
	return pipelinetest.NewWith(t, pipelinetest.Options{ProcessorEnv: map[string]string{
		"DESTINATIONS":        string(raw),
		"DESTINATION_SECRETS": `{"` + sinkSecretARN + `":"` + sinkSecret + `"}`,
		"BACKOFF_MAX":         "1s",
	}})
}

// processors are the two ways a test runs the processor: built in
// process as Lambda's main builds it, and the real bootstrap under
// aws-lambda-rie.
var processors = []struct {
	name      string
	bootstrap bool
}{{"in process", false}, {"bootstrap", true}}

// sendStandard delivers a Standard Webhooks event of type typ as message
// id through the receiver and returns its key.
func sendStandard(t *testing.T, p *pipelinetest.Pipeline, id, typ string) webhook.Key {
	t.Helper()
	return sendStandardBody(t, p, id, []byte(`{"type":"`+typ+`","timestamp":"2026-12-01T12:00:00Z","data":{"n":1}}`))
}

// sendStandardBody delivers body, a Standard Webhooks event, as message id
// through the receiver and returns its key.
func sendStandardBody(t testing.TB, p *pipelinetest.Pipeline, id string, body []byte) webhook.Key {
	t.Helper()
	h := standard.Headers(body, id, time.Now(), pipelinetest.StandardSecret)
	if resp := p.Send(t, lambdalocal.WebhookEvent("standard", "POST", h, body)); resp.StatusCode != 200 {
		t.Fatalf("receiver: %d %s", resp.StatusCode, resp.Body)
	}
	return webhook.NewKey("standard", id)
}

// TestDestinationsOnTheEmulators: through the receiver and the processor
// as Lambda builds them (with the example shop beside the destinations),
// on dynalite and local-aws-sqs: a 503 is retried and delivered to that
// destination alone, with the same webhook-id; the filters choose the
// destinations; a 410 parks the event at once; a replay of it, once the
// destination is back, delivers to that destination only; the delivery
// log and the metrics tell each destination's attempts.
func TestDestinationsOnTheEmulators(t *testing.T) {
	steady, flaky, gone, never := newSink(t), newSink(t, 503), newSink(t, 410), newSink(t)
	cfgs := []destination.Config{
		{Name: "steady", URL: steady.srv.URL, Events: []string{"standard:*"}, Secret: sinkSecretARN},
		{Name: "flaky", URL: flaky.srv.URL, Events: []string{"standard:invoice.*"}, Secret: sinkSecretARN},
		{Name: "gone", URL: gone.srv.URL, Events: []string{"standard:order.*"}, Secret: sinkSecretARN},
		{Name: "never", URL: never.srv.URL, Events: []string{"shopify:orders/*"}, Secret: sinkSecretARN},
	}
	p := withDestinations(t, cfgs)
	invoice := sendStandard(t, p, "msg_dest_invoice", "invoice.paid")
	order := sendStandard(t, p, "msg_dest_order", "order.created")
	keys := []webhook.Key{invoice, order}
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, keys) })

	for key, want := range map[webhook.Key]inbox.Status{invoice: inbox.Done, order: inbox.Dead} {
		if it, err := p.Inbox.Get(context.Background(), key); err != nil || it.Status != want {
			t.Errorf("%s: %s (%s), %v; want %s", key, it.Status, it.LastError, err, want)
		}
	}
	if reason := p.DLQReasons(t)[order]; !strings.Contains(reason, "destination gone: 410 Gone") {
		t.Errorf("DLQ reason of %s = %q; want it to name the destination and its answer", order, reason)
	}
	wantSteady := []delivery{
		{ID: destination.WebhookID(invoice, "steady"), Type: "invoice.paid", Verified: true},
		{ID: destination.WebhookID(order, "steady"), Type: "order.created", Verified: true},
	}
	sortByType := func(ds []delivery) []delivery {
		if len(ds) == 2 && ds[0].Type > ds[1].Type {
			ds[0], ds[1] = ds[1], ds[0]
		}
		return ds
	}
	if diff := gocmp.Diff(wantSteady, sortByType(steady.deliveries())); diff != "" {
		t.Errorf("steady received (-want +got):\n%s", diff)
	}
	flakyID := destination.WebhookID(invoice, "flaky")
	if diff := gocmp.Diff([]delivery{{flakyID, "invoice.paid", true}, {flakyID, "invoice.paid", true}}, flaky.deliveries()); diff != "" {
		t.Errorf("flaky received (-want +got): a 503, then the same webhook-id again\n%s", diff)
	}
	if len(never.deliveries()) != 0 {
		t.Errorf("never received %d deliveries; its pattern matches no event", len(never.deliveries()))
	}

	// The destination is back: a replay of the parked event delivers to it,
	// and to no destination that had it already.
	gone.answer()
	replayFn := p.Build(t, "DlqReplayFunction", nil).(func(context.Context, replay.Request) (replay.Summary, error))
	if _, err := replayFn(context.Background(), replay.Request{Keys: []string{string(order)}}); err != nil {
		t.Fatal(err)
	}
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllIn(t, []webhook.Key{order}, inbox.Done) })
	if got := len(gone.deliveries()); got != 2 {
		t.Errorf("gone received %d deliveries; want 2 (the 410, then the replay)", got)
	}
	if got := len(steady.deliveries()); got != 2 {
		t.Errorf("steady received %d deliveries; want 2: the replay does not deliver to it again", got)
	}

	log := destination.NewLog(p.DynamoDB, p.Stack.Tables["InboxTable"], 0)
	attempts := map[webhook.Key]map[string]string{}
	for _, key := range keys {
		as, err := log.Read(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		attempts[key] = map[string]string{}
		for _, a := range as {
			attempts[key][a.Destination] = strings.Join([]string{string(rune('0' + a.Attempts)), a.LastAnswer, map[bool]string{true: "delivered"}[a.Delivered]}, " ")
		}
	}
	want := map[webhook.Key]map[string]string{
		invoice: {"steady": "1 200 OK delivered", "flaky": "2 200 OK delivered"},
		order:   {"steady": "1 200 OK delivered", "gone": "2 200 OK delivered"},
	}
	if diff := gocmp.Diff(want, attempts); diff != "" {
		t.Errorf("delivery log (-want +got):\n%s", diff)
	}
	recs, err := ledger.New(p.DynamoDB, p.Stack.Tables["InboxTable"], 0).Records(context.Background(), order)
	if err != nil || len(recs) != 2 || recs[0].Effect != "destination:gone" || recs[1].Effect != "destination:steady" {
		t.Errorf("ledger of %s = %v, %v; want destination:gone and destination:steady", order, recs, err)
	}

	counts := map[string]float64{}
	for _, l := range p.Metrics(t) {
		if d, ok := l.Dims[metrics.DimDestination]; ok {
			for name, v := range l.Values {
				counts[d+" "+name] += v
			}
		}
	}
	for k, want := range map[string]float64{"steady DestinationDelivered": 2, "flaky DestinationRetried": 1, "flaky DestinationDelivered": 1,
		"gone DestinationGone": 1, "gone DestinationParked": 1, "gone DestinationDelivered": 1} {
		if counts[k] != want {
			t.Errorf("metric %s = %v; want %v", k, counts[k], want)
		}
	}
}

// TestGeneratedStackWithDestinationsOnly: the stack `hookinbox template`
// generates from a business file with only Destinations, run with
// hookinbox's own functions on the emulators, delivers a verified event
// to its destination and ends it DONE, with no business to run.
func TestGeneratedStackWithDestinationsOnly(t *testing.T) {
	s := newSink(t)
	business := "Destinations:\n  - {name: sink, url: 'https://sink.example.com/hooks', events: ['standard:*'], secret: '" + sinkSecretARN + "'}\n"
	out, err := stacktemplate.Generate([]byte(business))
	if err != nil {
		t.Fatal(err)
	}
	// Run locally, the destination is the sink on this machine.
	tpl, err := samtemplate.Parse(bytes.ReplaceAll(out, []byte("https://sink.example.com/hooks"), []byte(s.srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	p := pipelinetest.NewWith(t, pipelinetest.Options{Template: tpl, ProcessorEnv: map[string]string{
		"DESTINATION_SECRETS": `{"` + sinkSecretARN + `":"` + sinkSecret + `"}`,
	}})
	key := sendStandard(t, p, "msg_dest_generated", "invoice.paid")
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllIn(t, []webhook.Key{key}, inbox.Done) })
	want := []delivery{{ID: destination.WebhookID(key, "sink"), Type: "invoice.paid", Verified: true}}
	if diff := gocmp.Diff(want, s.deliveries()); diff != "" {
		t.Errorf("sink received (-want +got):\n%s", diff)
	}
}

// TestSlowDestinationOnTheEmulators: three events in one batch, a
// destination that holds its one slot and one that answers at once. The
// fast one gets all three while the slow one holds the first; the other
// two end that attempt FAILED with the attempt taken back (busy is no
// failure), and once the slow one answers every event ends DONE after one
// counted attempt, the fast destination never delivered to twice.
func TestSlowDestinationOnTheEmulators(t *testing.T) {
	release := make(chan struct{})
	var slowMu sync.Mutex
	var slowGot int
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowMu.Lock()
		slowGot++
		slowMu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	fast := newSink(t)
	cfgs := []destination.Config{
		{Name: "slow", URL: slow.URL, Events: []string{"*"}, Secret: sinkSecretARN, Concurrency: 1},
		{Name: "fast", URL: fast.srv.URL, Events: []string{"*"}, Secret: sinkSecretARN},
	}
	p := withDestinations(t, cfgs)
	var keys []webhook.Key
	for _, id := range []string{"msg_slow_1", "msg_slow_2", "msg_slow_3"} {
		keys = append(keys, sendStandard(t, p, id, "invoice.paid"))
	}
	polled := make(chan error, 1)
	go func() { _, err := p.Source.PollOnce(context.Background()); polled <- err }()

	// While the slow destination holds the first event: the fast one has
	// all three, and the two others are back FAILED, their attempt not
	// counted.
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				close(release)
				t.Fatalf("never: %s", what)
			}
		}
	}
	waitFor("fast has 3 deliveries and two events are back FAILED", func() bool {
		failed := 0
		for _, k := range keys {
			if it, err := p.Inbox.Get(context.Background(), k); err == nil && it.Status == inbox.Failed && it.Attempts == 0 {
				failed++
			}
		}
		return len(fast.deliveries()) == 3 && failed == 2
	})
	close(release)
	if err := <-polled; err != nil {
		t.Fatal(err)
	}
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllIn(t, keys, inbox.Done) })
	for _, k := range keys {
		if it, _ := p.Inbox.Get(context.Background(), k); it.Attempts != 1 {
			t.Errorf("%s: %d attempts counted; want 1 (busy attempts are taken back)", k, it.Attempts)
		}
	}
	slowMu.Lock()
	defer slowMu.Unlock()
	if slowGot != 3 || len(fast.deliveries()) != 3 {
		t.Errorf("slow got %d, fast %d deliveries; want 3 each", slowGot, len(fast.deliveries()))
	}
}

// TestRefusingDestinationHoldsBackNoOther: three invoices in one batch, a
// destination that answers 400, one that takes 400 ms an answer with one
// slot, and one for every event that answers its first delivery 503. The
// refusal parks each invoice only once the other two have it: steady gets
// all three, each once, every all three (one twice: the 503 is retried),
// and the ledger records both; each invoice is parked naming bad's answer
// alone, and counted parked for bad only.
func TestRefusingDestinationHoldsBackNoOther(t *testing.T) {
	for _, run := range processors {
		t.Run(run.name, func(t *testing.T) {
			steady, bad, every := startSink(t, &sink{delay: 400 * time.Millisecond}), startSink(t, &sink{otherwise: 400}), newSink(t, 503)
			p := withDestinations(t, []destination.Config{
				{Name: "steady", URL: steady.srv.URL, Events: []string{"standard:invoice.*"}, Secret: sinkSecretARN, Concurrency: 1},
				{Name: "bad", URL: bad.srv.URL, Events: []string{"standard:invoice.*"}, Secret: sinkSecretARN},
				{Name: "every", URL: every.srv.URL, Events: []string{"*"}, Secret: sinkSecretARN},
			})
			if run.bootstrap {
				p.ProcessWithBootstrap(t, nil)
			}
			var keys []webhook.Key
			for _, id := range []string{"msg_held_1", "msg_held_2", "msg_held_3"} {
				keys = append(keys, sendStandard(t, p, id, "invoice.paid"))
			}
			p.ProcessUntil(t, 60*time.Second, func() bool { return p.AllFinal(t, keys) })

			reasons := p.DLQReasons(t)
			effectLedger := ledger.New(p.DynamoDB, p.Stack.Tables["InboxTable"], 0)
			for _, key := range keys {
				if it, _ := p.Inbox.Get(context.Background(), key); it.Status != inbox.Dead {
					t.Errorf("%s: %s; want DEAD once the others had it", key, it.Status)
				}
				if r := reasons[key]; !strings.Contains(r, "destination bad: 400 Bad Request") || strings.Contains(r, "steady") || strings.Contains(r, "every") {
					t.Errorf("DLQ reason of %s = %q; want bad's 400 alone", key, r)
				}
				recs, err := effectLedger.Records(context.Background(), key)
				var names []string
				for _, r := range recs {
					names = append(names, r.Effect)
				}
				if diff := gocmp.Diff([]string{"destination:every", "destination:steady"}, names); err != nil || diff != "" {
					t.Errorf("ledger of %s (-want +got), %v:\n%s", key, err, diff)
				}
			}
			for name, s := range map[string]*sink{"steady": steady, "every": every} {
				var want []delivery
				for _, key := range keys {
					want = append(want, delivery{ID: destination.WebhookID(key, name), Type: "invoice.paid", Verified: true})
				}
				byID := func(a, b delivery) int { return strings.Compare(a.ID, b.ID) }
				got := s.deliveries()
				slices.SortFunc(got, byID)
				slices.SortFunc(want, byID)
				if diff := gocmp.Diff(want, slices.Compact(got)); diff != "" || len(got) != map[string]int{"steady": 3, "every": 4}[name] {
					t.Errorf("%s received %d deliveries (-want +got, repeats left out):\n%s", name, len(got), diff)
				}
			}
			parked := map[string]float64{}
			for _, l := range p.Metrics(t) {
				if v, ok := l.Values[metrics.DestinationParked]; ok {
					parked[l.Dims[metrics.DimDestination]] += v
				}
			}
			if diff := gocmp.Diff(map[string]float64{"bad": 3}, parked); diff != "" {
				t.Errorf("DestinationParked by destination (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPayloadForwardedByteForByte: verified bodies that json.Marshal would
// change (HTML characters, unicode escapes, whitespace, key order, number
// spellings, and one over 384 KiB, kept in S3) reach the destination
// byte for byte: the payload in the body is the bytes the provider signed.
func TestPayloadForwardedByteForByte(t *testing.T) {
	bodies := map[string]string{
		"html":       `{"type":"invoice.paid","note":"<b>Tom & Jerry</b> -> 5 > 3"}`,
		"unicode":    `{"type":"invoice.paid","name":"Ren\u00e9e \ud83d\ude00","raw":"Renée 😀","sep":"\u2028"}`,
		"whitespace": "{\n  \"type\" : \"invoice.paid\",\n\t\"data\": [ 1, 2 ]\n}\n",
		"key order":  `{"z":1,"type":"invoice.paid","a":{"y":2,"b":3},"amount":1.50,"big":12345678901234567890}`,
		"large":      `{"type":"invoice.paid","lines":"` + strings.Repeat(`<&> é \u00e9 `, 40_000) + `"}`,
	}
	for _, run := range processors {
		t.Run(run.name, func(t *testing.T) {
			s := newSink(t)
			p := withDestinations(t, []destination.Config{{Name: "sink", URL: s.srv.URL, Events: []string{"*"}, Secret: sinkSecretARN}})
			if run.bootstrap {
				p.ProcessWithBootstrap(t, nil)
			}
			sent := map[webhook.Key]string{}
			var keys []webhook.Key
			for name, body := range bodies {
				key := sendStandardBody(t, p, "msg_bytes_"+strings.ReplaceAll(name, " ", "_"), []byte(body))
				sent[key] = body
				keys = append(keys, key)
			}
			p.ProcessUntil(t, 60*time.Second, func() bool { return p.AllIn(t, keys, inbox.Done) })
			got := s.payloads()
			for key, body := range sent {
				if payload := got[destination.WebhookID(key, "sink")]; string(payload) != body {
					t.Errorf("%s: payload forwarded (%d bytes) differs from the verified body (%d bytes):\n%.200q\nwant\n%.200q", key, len(payload), len(body), payload, body)
				}
			}
		})
	}
}

// sendShopify delivers a signed Shopify delivery of topic through the
// receiver and returns its key.
func sendShopify(t *testing.T, p *pipelinetest.Pipeline, topic, id, body string) webhook.Key {
	t.Helper()
	req, err := p.Stack.Signed(shopify.Sender(), sample.Event{ID: id, Type: topic, Body: []byte(body)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if resp := p.Send(t, req); resp.StatusCode != 200 {
		t.Fatalf("receiver: %d %s", resp.StatusCode, resp.Body)
	}
	return webhook.NewKey(shopify.Name, id)
}

// TestComplianceTopicsReachDestinations: Shopify's compliance topics go
// to the destinations whose filters match them, byte for byte, so their
// consumers can erase too, and hookinbox's own erasure is carried out
// whatever a destination answers: a customers/redact that one destination
// refuses (400) and another fails once (503) erases the customer's order,
// is delivered to every other matching destination, and is parked naming
// the refusal alone, its own payload kept for a replay.
func TestComplianceTopicsReachDestinations(t *testing.T) {
	for _, run := range processors {
		t.Run(run.name, func(t *testing.T) {
			ctx := context.Background()
			consumer, orders, flaky, refuser := newSink(t), newSink(t), newSink(t), startSink(t, &sink{otherwise: 400})
			p := withDestinations(t, []destination.Config{
				{Name: "consumer", URL: consumer.srv.URL, Events: []string{"shopify:customers/*", "shopify:shop/*"}, Secret: sinkSecretARN},
				{Name: "orders", URL: orders.srv.URL, Events: []string{"shopify:orders/*"}, Secret: sinkSecretARN},
				{Name: "flaky", URL: flaky.srv.URL, Events: []string{"shopify:*"}, Secret: sinkSecretARN},
				{Name: "refuser", URL: refuser.srv.URL, Events: []string{"shopify:customers/redact"}, Secret: sinkSecretARN},
			})
			if run.bootstrap {
				p.ProcessWithBootstrap(t, nil)
			}
			const shop = `"shop_id":954889,"shop_domain":"hookinbox-demo.myshopify.com"` // the shop shopify.Headers names
			order := sendShopify(t, p, "orders/paid", "5551001",
				`{"id":95551001,"email":"jane.dest@example.com","customer":{"id":7102299,"email":"jane.dest@example.com"},"line_items":[]}`)
			p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllIn(t, []webhook.Key{order}, inbox.Done) })

			bodies := map[string]string{
				"customers/data_request": `{` + shop + `,"customer":{"id":7102299,"email":"jane.dest@example.com"},"orders_requested":[95551001],"data_request":{"id":9999}}`,
				"customers/redact":       `{` + shop + `,"customer":{"id":7102299,"email":"jane.dest@example.com"},"orders_to_redact":[95551001]}`,
			}
			flaky.answer(503)
			request := sendShopify(t, p, "customers/data_request", "5551002", bodies["customers/data_request"])
			p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{request}) })
			flaky.answer(503)
			redact := sendShopify(t, p, "customers/redact", "5551003", bodies["customers/redact"])
			p.ProcessUntil(t, 60*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{redact}) })

			if it, _ := p.Inbox.Get(ctx, request); it.Status != inbox.Done {
				t.Errorf("data request: %s (%s); want DONE", it.Status, it.LastError)
			}
			if it, _ := p.Inbox.Get(ctx, redact); it.Status != inbox.Dead || it.PayloadRemoved != "" {
				t.Errorf("customers/redact: %s, payload removed %q; want DEAD with its payload, for a replay to refuser", it.Status, it.PayloadRemoved)
			}
			if r := p.DLQReasons(t)[redact]; !strings.Contains(r, "destination refuser: 400") || strings.Contains(r, "flaky") {
				t.Errorf("DLQ reason of the redact = %q; want refuser's 400 alone", r)
			}
			if it, err := p.Inbox.Get(ctx, order); err != nil || it.PayloadRemoved == "" {
				t.Errorf("the customer's order after customers/redact: payload removed %q (%v); want it erased", it.PayloadRemoved, err)
			}
			for name, want := range map[string]map[webhook.Key]string{
				"consumer": {request: bodies["customers/data_request"], redact: bodies["customers/redact"]},
				"flaky":    {request: bodies["customers/data_request"], redact: bodies["customers/redact"]},
				"orders":   {},
			} {
				s := map[string]*sink{"consumer": consumer, "flaky": flaky, "orders": orders}[name]
				got := s.payloads()
				for key, body := range want {
					if string(got[destination.WebhookID(key, name)]) != body {
						t.Errorf("%s got %s as %q; want %q", name, key, got[destination.WebhookID(key, name)], body)
					}
				}
			}
			if n, m := len(orders.deliveries()), len(consumer.deliveries()); n != 1 || m != 2 {
				t.Errorf("orders received %d deliveries, consumer %d; want the order alone, and the two requests", n, m)
			}

			shopRedact := sendShopify(t, p, "shop/redact", "5551004", `{`+shop+`}`)
			p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllIn(t, []webhook.Key{shopRedact}, inbox.Done) })
			if got := consumer.payloads()[destination.WebhookID(shopRedact, "consumer")]; string(got) != `{`+shop+`}` {
				t.Errorf("consumer got shop/redact as %q", got)
			}
		})
	}
}

// TestBootstrapRefusesPlainHTTPUnlessLocal: the real processor bootstrap
// with a destination on plain http:// to loopback (in Lambda, the
// runtime's own API) starts only when the local stack says so
// (destination.LocalHTTPEnv); as deployed, its cold start fails naming
// the destination, and nothing is delivered.
func TestBootstrapRefusesPlainHTTPUnlessLocal(t *testing.T) {
	s := newSink(t)
	p := withDestinations(t, []destination.Config{{Name: "sink", URL: s.srv.URL, Events: []string{"*"}, Secret: sinkSecretARN}})
	p.ProcessWithBootstrap(t, map[string]string{destination.LocalHTTPEnv: ""})
	key := sendStandard(t, p, "msg_plain_http", "invoice.paid")
	if _, err := p.Source.PollOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The bootstrap's output reaches the log as aws-lambda-rie copies it,
	// which may be after the invocation's answer.
	const why = `"function cannot start","reason":"DESTINATIONS: destination \"sink\": url: want https://: plain http:// is for the local stack only`
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.Logs.String(), why) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(p.Logs.String(), why) {
		t.Errorf("the bootstrap's log does not say why it cannot start:\n%s", p.Logs.String())
	}
	if it, _ := p.Inbox.Get(context.Background(), key); it.Status != inbox.Received || len(s.deliveries()) != 0 {
		t.Errorf("event %s, %d deliveries; want it untouched, nothing delivered", it.Status, len(s.deliveries()))
	}
}

// TestRefusalParksAfterTheBusinessAndTheOthersThenReplaysToItAlone: a
// checkout whose business fails its first attempt (Stripe answers 500),
// beside a destination that refuses (400) and one that answers 503 then
// 200. The event is parked only once the business and the flaky
// destination have it, each once, naming the refusal alone; its replay,
// once the refusing destination is fixed, delivers to it and runs
// nothing else again.
func TestRefusalParksAfterTheBusinessAndTheOthersThenReplaysToItAlone(t *testing.T) {
	bad, flaky := startSink(t, &sink{otherwise: 400}), newSink(t, 503)
	p := withDestinations(t, []destination.Config{
		{Name: "bad", URL: bad.srv.URL, Events: []string{"stripe:checkout.session.*"}, Secret: sinkSecretARN},
		{Name: "flaky", URL: flaky.srv.URL, Events: []string{"stripe:checkout.session.*"}, Secret: sinkSecretARN},
	})
	p.Stripe.FailNext(500)
	key, body := pipelinetest.Checkout("refusal", 1, time.Now().Add(-time.Minute))
	p.Deliver(t, body)
	keys := []webhook.Key{key}
	p.ProcessUntil(t, 60*time.Second, func() bool { return p.AllFinal(t, keys) })

	if it, _ := p.Inbox.Get(context.Background(), key); it.Status != inbox.Dead {
		t.Fatalf("%s: %s (%s); want DEAD once the business and flaky had it", key, it.Status, it.LastError)
	}
	if r := p.DLQReasons(t)[key]; !strings.Contains(r, "destination bad: 400 Bad Request") || strings.Contains(r, "flaky") || strings.Contains(r, "500") {
		t.Errorf("DLQ reason = %q; want bad's 400 alone", r)
	}
	p.EffectsOnce(t, keys)
	id := destination.WebhookID(key, "flaky")
	if diff := gocmp.Diff([]delivery{{id, "checkout.session.completed", true}, {id, "checkout.session.completed", true}}, flaky.deliveries()); diff != "" {
		t.Errorf("flaky received (-want +got): its 503, then the same webhook-id once more\n%s", diff)
	}
	asked := len(bad.deliveries())
	if asked < 2 {
		t.Errorf("bad received %d deliveries; want its refusal held while the others retried, and asked again", asked)
	}

	bad.answer(200)
	replayFn := p.Build(t, "DlqReplayFunction", nil).(func(context.Context, replay.Request) (replay.Summary, error))
	if _, err := replayFn(context.Background(), replay.Request{Keys: []string{string(key)}}); err != nil {
		t.Fatal(err)
	}
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllIn(t, keys, inbox.Done) })
	if got := len(bad.deliveries()); got != asked+1 {
		t.Errorf("bad received %d deliveries; want %d: its refusals, then the replay", got, asked+1)
	}
	if got := len(flaky.deliveries()); got != 2 {
		t.Errorf("flaky received %d deliveries; want 2: the replay does not deliver to it again", got)
	}
	p.EffectsOnce(t, keys)
}

// TestRefusalParkedOutOfTriesSaysWhy: a destination that refuses (400)
// beside one that answers 503 every time: the refusal is held while the
// other retries, and once the event is out of tries it is parked with
// both answers, not with the note of a hold that has ended.
func TestRefusalParkedOutOfTriesSaysWhy(t *testing.T) {
	bad, flaky := startSink(t, &sink{otherwise: 400}), startSink(t, &sink{otherwise: 503})
	p := withDestinations(t, []destination.Config{
		{Name: "bad", URL: bad.srv.URL, Events: []string{"standard:*"}, Secret: sinkSecretARN},
		{Name: "flaky", URL: flaky.srv.URL, Events: []string{"standard:*"}, Secret: sinkSecretARN},
	})
	key := sendStandard(t, p, "msg_out_of_tries", "invoice.paid")
	p.ProcessUntil(t, 90*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{key}) })

	it, err := p.Inbox.Get(context.Background(), key)
	if err != nil || it.Status != inbox.Dead || it.Attempts < 2 {
		t.Fatalf("%s: %s after %d attempts (%s), %v; want DEAD out of tries", key, it.Status, it.Attempts, it.LastError, err)
	}
	for what, reason := range map[string]string{"last_error": it.LastError, "DLQ reason": p.DLQReasons(t)[key]} {
		if !strings.Contains(reason, "destination bad: 400 Bad Request") || !strings.Contains(reason, "destination flaky: 503") || strings.Contains(reason, "held") {
			t.Errorf("%s = %q; want both answers and no note of a hold", what, reason)
		}
	}
}
