package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// thinCheckout makes the n-th checkout action of prefix known to the
// Stripe stand-in as a thin event would leave it (its v2 event fetchable,
// its checkout session at its URL) and returns the snapshot event of the
// action and its thin notification. With migrating, the notification
// names the snapshot event (snapshot_event), as during a migration.
func thinCheckout(t *testing.T, p *pipelinetest.Pipeline, prefix string, n int, at time.Time, migrating bool) (snapshotKey webhook.Key, snapshot, thin []byte) {
	t.Helper()
	snapshotKey, snapshot = pipelinetest.Checkout(prefix, n, at)
	var ev struct {
		Data struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	var obj map[string]any
	if err := json.Unmarshal(snapshot, &ev); err != nil || json.Unmarshal(ev.Data.Object, &obj) != nil {
		t.Fatalf("checkout fixture without a session: %v", err)
	}
	// Every action has its own session (the fixture's id is one for all).
	sessionID := fmt.Sprintf("cs_test_%s%05d", prefix, n)
	obj["id"] = sessionID
	session, _ := json.Marshal(obj)
	url := "/v1/checkout/sessions/" + sessionID
	p.Stripe.SetObject(url, session)
	twin := ""
	if migrating {
		twin = snapshotKey.EventID()
	}
	thin = verifytest.StripeThin("v1.checkout.session.completed", fmt.Sprintf("evt_test_65%s%05d", prefix, n), at,
		verifytest.StripeRelated{ID: sessionID, Type: "checkout.session", URL: url}, twin)
	if err := p.Stripe.AddThinEvent(thin); err != nil {
		t.Fatal(err)
	}
	return snapshotKey, snapshot, thin
}

// deliverShuffled delivers each body twice in a fixed shuffle and returns
// how often the receiver answered each status.
func deliverShuffled(t *testing.T, p *pipelinetest.Pipeline, bodies [][]byte, seed uint64) map[string]int {
	t.Helper()
	var twice [][]byte
	for _, b := range bodies {
		twice = append(twice, b, b)
	}
	answers := map[string]int{}
	for _, i := range shuffled(len(twice), seed) {
		answers[p.Deliver(t, twice[i])]++
	}
	return answers
}

// TestStripeThinEvents runs thin events through the receiver and the
// processor on the emulators: during a migration the snapshot and thin
// event of an action are one claim, whichever comes first; a thin-only
// action is claimed under its own id and processed from what the
// processor fetches; an API v2 type ends IGNORED; a v2 event Stripe does
// not know ends DEAD with the reason.
func TestStripeThinEvents(t *testing.T) {
	p := pipelinetest.New(t)
	ctx := context.Background()
	at := time.Now().Add(-time.Minute)

	t.Run("migration: snapshot and thin of the same actions, each twice, shuffled", func(t *testing.T) {
		const n = 6
		var keys []webhook.Key
		var bodies [][]byte
		for i := range n {
			key, snapshot, thin := thinCheckout(t, p, "thinmig", i, at, true)
			keys = append(keys, key)
			bodies = append(bodies, snapshot, thin)
		}
		if answers := deliverShuffled(t, p, bodies, 20261201); answers["accepted"] != n || answers["duplicate"] != 3*n {
			t.Fatalf("answers %v, want %d accepted (one per action) and %d duplicate", answers, n, 3*n)
		}
		p.ProcessUntil(t, 60*time.Second, func() bool { return p.AllFinal(t, keys) })
		if !p.AllIn(t, keys, inbox.Done) {
			t.Fatalf("not all DONE: DLQ %v", p.DLQReasons(t))
		}
		p.EffectsOnce(t, keys)
		if thinGets(p) == 0 {
			t.Error("no action's thin event was claimed first: the shuffle tried only the snapshot path")
		}
	})

	t.Run("thin only", func(t *testing.T) {
		sentBefore, gotsBefore := len(p.SES.Sent()), thinGets(p)
		const n = 3
		var keys []webhook.Key
		var bodies [][]byte
		for i := range n {
			_, _, thin := thinCheckout(t, p, "thinonly", i, at, false)
			keys = append(keys, webhook.NewKey("stripe", fmt.Sprintf("evt_test_65thinonly%05d", i)))
			bodies = append(bodies, thin)
		}
		if answers := deliverShuffled(t, p, bodies, 7); answers["accepted"] != n || answers["duplicate"] != n {
			t.Fatalf("answers %v, want %d accepted and %d duplicate", answers, n, n)
		}
		p.ProcessUntil(t, 60*time.Second, func() bool { return p.AllFinal(t, keys) })
		if !p.AllIn(t, keys, inbox.Done) {
			t.Fatalf("not all DONE: DLQ %v", p.DLQReasons(t))
		}
		sent := p.SES.Sent()[sentBefore:]
		if len(sent) != n {
			t.Errorf("%d emails for %d thin-only checkouts, want one each", len(sent), n)
		}
		for i := range n {
			want := fmt.Sprintf("buyer%d@example.com", i)
			found := false
			for _, m := range sent {
				found = found || strings.Contains(fmt.Sprint(m), want)
			}
			if !found {
				t.Errorf("no email to %s, the address of the fetched session, in %v", want, sent)
			}
		}
		if got := thinGets(p) - gotsBefore; got < 2*n {
			t.Errorf("%d GETs of v2 events and sessions, want at least %d (event and object per action)", got, 2*n)
		}
	})

	t.Run("an API v2 type ends IGNORED", func(t *testing.T) {
		p.Stripe.SetObject("/v2/core/accounts/acct_thin1", []byte(`{"id":"acct_thin1","object":"v2.core.account"}`))
		thin := verifytest.StripeThin("v2.core.account.created", "evt_test_65v2only", at,
			verifytest.StripeRelated{ID: "acct_thin1", Type: "v2.core.account", URL: "/v2/core/accounts/acct_thin1"}, "")
		if err := p.Stripe.AddThinEvent(thin); err != nil {
			t.Fatal(err)
		}
		key := webhook.NewKey("stripe", "evt_test_65v2only")
		if got := p.Deliver(t, thin); got != "accepted" {
			t.Fatalf("answer %q, want accepted", got)
		}
		p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{key}) })
		it, err := p.Inbox.Get(ctx, key)
		if err != nil || it.Status != inbox.Ignored || it.EventType != "v2.core.account.created" {
			t.Errorf("%s: %s (%s), %v; want IGNORED", key, it.Status, it.EventType, err)
		}
	})

	t.Run("Stripe could not create events: the operator is told", func(t *testing.T) {
		thin := verifytest.StripeThin("v2.core.health.event_generation_failure.resolved", "evt_test_65health", at, verifytest.StripeRelated{}, "")
		var v2 map[string]any
		_ = json.Unmarshal(thin, &v2)
		v2["data"] = map[string]any{"alert_id": "alrt_1", "severity": "critical", "summary": "Some events could not be created",
			"impact": map[string]any{"event_type": "customer.subscription.updated", "related_object": map[string]any{"id": "sub_1lost", "type": "subscription"}}}
		full, _ := json.Marshal(v2)
		if err := p.Stripe.AddThinEvent(full); err != nil {
			t.Fatal(err)
		}
		key := webhook.NewKey("stripe", "evt_test_65health")
		p.Deliver(t, thin)
		p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{key}) })
		if it, err := p.Inbox.Get(ctx, key); err != nil || it.Status != inbox.Done {
			t.Errorf("%s: %s, %v; want DONE", key, it.Status, err)
		}
		if got := emf.Sum(p.Metrics(t), metrics.StripeEventsNotGenerated, nil, time.Time{}); got != 1 {
			t.Errorf("StripeEventsNotGenerated = %v, want 1", got)
		}
	})

	t.Run("a v2 event Stripe does not know ends DEAD with the reason", func(t *testing.T) {
		thin := verifytest.StripeThin("v1.customer.created", "evt_test_65unknown", at,
			verifytest.StripeRelated{ID: "cus_thin404", Type: "customer", URL: "/v1/customers/cus_thin404"}, "")
		key := webhook.NewKey("stripe", "evt_test_65unknown")
		if got := p.Deliver(t, thin); got != "accepted" {
			t.Fatalf("answer %q, want accepted", got)
		}
		p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{key}) })
		it, err := p.Inbox.Get(ctx, key)
		if err != nil || it.Status != inbox.Dead {
			t.Fatalf("%s: %s, %v; want DEAD", key, it.Status, err)
		}
		if reason := p.DLQReasons(t)[key]; !strings.Contains(reason, "evt_test_65unknown") || !strings.Contains(reason, "404") {
			t.Errorf("DLQ reason %q, want one naming the event and the 404", reason)
		}
	})
}

// eventBridgeEvent wraps a Stripe event (snapshot or thin) as Stripe's
// EventBridge destination puts it on its partner event source: the Stripe
// event is the detail; the envelope's id is EventBridge's own.
func eventBridgeEvent(t *testing.T, n int, stripeEvent []byte) events.EventBridgeEvent {
	t.Helper()
	var typ struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(stripeEvent, &typ); err != nil {
		t.Fatal(err)
	}
	return events.EventBridgeEvent{
		Version: "0", ID: fmt.Sprintf("6a7e8feb-b491-4cf7-a9f1-%012d", n), DetailType: typ.Type,
		Source: "aws.partner/stripe.com/ed_test_61hookinbox", AccountID: "111122223333", Region: "eu-central-1",
		Time: time.Now(), Detail: stripeEvent,
	}
}

// TestStripeEventBridgeAndWebhookAreOneClaim: the same actions by
// webhook and through the EventBridge destination (snapshot and thin
// events, each several times, in any order) are one claim each, through
// the same intake, and run each effect once.
func TestStripeEventBridgeAndWebhookAreOneClaim(t *testing.T) {
	// The EventBridge function is deployed only with a partner source.
	p := pipelinetest.NewWith(t, pipelinetest.Options{Params: map[string]string{"StripeEventBridgeSource": "aws.partner/stripe.com/ed_test_61hookinbox"}})
	handle, ok := p.Build(t, "StripeEventBridgeFunction", nil).(func(context.Context, events.EventBridgeEvent) error)
	if !ok {
		t.Fatal("StripeEventBridgeFunction's handler does not take an EventBridge event")
	}
	at := time.Now().Add(-time.Minute)
	const n = 4
	var keys []webhook.Key
	type delivery struct {
		body   []byte
		bridge bool
	}
	var all []delivery
	for i := range n {
		key, snapshot, thin := thinCheckout(t, p, "bridge", i, at, true)
		keys = append(keys, key)
		all = append(all, delivery{snapshot, false}, delivery{thin, false}, delivery{snapshot, true}, delivery{thin, true})
	}
	for j, i := range shuffled(len(all), 99) {
		if all[i].bridge {
			if err := handle(context.Background(), eventBridgeEvent(t, j, all[i].body)); err != nil {
				t.Fatalf("EventBridge delivery: %v", err)
			}
			continue
		}
		p.Deliver(t, all[i].body)
	}
	if got := queueDepth(t, p); got != n {
		t.Errorf("%d messages on the events queue, want one per action (%d)", got, n)
	}
	p.ProcessUntil(t, 60*time.Second, func() bool { return p.AllFinal(t, keys) })
	if !p.AllIn(t, keys, inbox.Done) {
		t.Fatalf("not all DONE: DLQ %v", p.DLQReasons(t))
	}
	p.EffectsOnce(t, keys)

	// A detail that is not a Stripe event is dropped: nothing claimed.
	bad := eventBridgeEvent(t, 1000, []byte(`{"id":"evt_1bridgebad","object":"event"}`))
	if err := handle(context.Background(), bad); err != nil {
		t.Errorf("malformed detail: %v, want it dropped (no retry can fix it)", err)
	}
	if _, err := p.Inbox.Get(context.Background(), webhook.NewKey("stripe", "evt_1bridgebad")); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("malformed detail claimed: %v", err)
	}
}

// queueDepth returns how many messages the events queue holds.
func queueDepth(t *testing.T, p *pipelinetest.Pipeline) int {
	t.Helper()
	return len(pipelinetest.Peek(t, p.Events))
}

// thinGets counts the GETs of v2 events and objects the stand-in answered.
func thinGets(p *pipelinetest.Pipeline) int {
	paths, _ := p.Stripe.ThinGets()
	return len(paths)
}
