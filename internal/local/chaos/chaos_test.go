package chaos

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/internal/verify"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestReadEvents(t *testing.T) {
	in := `{"id":"evt_1","object":"event","type":"checkout.session.completed","data":{"object":{}}}

{"object":"list","data":[{"id":"evt_3","object":"event","type":"invoice.paid"},{"id":"evt_2","object":"event","type":"customer.created"}],"has_more":false}
`
	evs, err := ReadEvents(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Key())+" "+e.Type)
	}
	want := []string{"stripe#evt_1 checkout.session.completed", "stripe#evt_3 invoice.paid", "stripe#evt_2 customer.created"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !bytes.HasPrefix(evs[1].Raw, []byte(`{"id":"evt_3"`)) {
		t.Errorf("a list's event keeps its own bytes: %s", evs[1].Raw)
	}

	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", "nope\n", "line 1: not a JSON object"},
		{"twice", `{"id":"evt_1","type":"x"}` + "\n" + `{"id":"evt_1","type":"x"}`, "line 2: event evt_1 is on line 1 already"},
		{"no type", `{"id":"evt_1"}`, "has no type"},
		{"bad id", `{"id":"evt 1","type":"x"}`, "event id"},
		{"not an event", `{"id":"cus_1","object":"customer","type":"x"}`, "not a Stripe event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadEvents(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadEvents error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestGenerateIsRealisticAndDeterministic(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	a, b := Generate(120, 42, at), Generate(120, 42, at)
	if len(a) != 120 || !cmp.Equal(a, b) {
		t.Fatalf("Generate(120, 42) gave %d events, same twice: %v", len(a), cmp.Equal(a, b))
	}
	var lines bytes.Buffer
	for _, l := range a {
		lines.Write(l)
		lines.WriteByte('\n')
	}
	evs, err := ReadEvents(&lines)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, e := range evs {
		types[e.Provider+" "+e.Type]++
	}
	for _, typ := range []string{"checkout.session.completed", "checkout.session.async_payment_succeeded",
		"customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted",
		"charge.refunded", "invoice.paid", "customer.created"} {
		if types["stripe "+typ] == 0 {
			t.Errorf("no Stripe %s in 120 generated events: %v", typ, types)
		}
	}
	for _, typ := range []string{"shopify orders/create", "shopify orders/updated", "shopify orders/paid",
		"adyen AUTHORISATION", "adyen REFUND", "github issues", "standard invoice.paid", "gopay notification"} {
		if types[typ] == 0 {
			t.Errorf("no %s in 120 generated events: %v", typ, types)
		}
	}
}

// TestProviderDeliveries reads the other providers' corpus lines and signs
// each delivery as its provider does: the receiver's own verifiers accept
// it, under the key the corpus names.
func TestProviderDeliveries(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var lines bytes.Buffer
	for _, l := range Generate(400, 7, at) {
		lines.Write(l)
		lines.WriteByte('\n')
	}
	evs, err := ReadEvents(&lines)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		if seen[ev.Provider] {
			continue
		}
		seen[ev.Provider] = true
		spec, ok := verify.Lookup(ev.Provider)
		if !ok {
			t.Fatalf("%s: no verifier", ev.Provider)
		}
		v, err := spec.New(LocalSecrets[ev.Provider], verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		header, body, err := LocalSecrets.Signed(ev, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		req := webhook.Request{Method: "POST", Header: header, Body: body}
		if ev.Provider == verify.GoPayProvider {
			// GET ?id=<payment id>, as Local and Remote deliver it.
			if _, err := ev.GoPayPayment(); err != nil {
				t.Errorf("%s: %v", ev.Key(), err)
			}
			req = webhook.Request{Method: verify.GoPayMethod, Query: map[string]string{"id": ev.ID}}
		}
		got, err := v.Verify(context.Background(), req)
		if err != nil {
			t.Errorf("%s: %v", ev.Key(), err)
			continue
		}
		if len(got) == 0 || got[0].Key() != ev.Key() {
			t.Errorf("%s: the verifier keys it %v", ev.Key(), got)
		}
	}
	if len(seen) != 6 {
		t.Errorf("providers in 400 generated events: %v, want stripe and 5 others", seen)
	}

	for _, tc := range []struct{ name, in, want string }{
		{"ftp", `{"object":"hookinbox.delivery","provider":"ftp","id":"1","type":"x","body":{}}`, `provider "ftp"`},
		{"gopay type", `{"object":"hookinbox.delivery","provider":"gopay","id":"1","type":"x","body":{"id":1,"state":"PAID"}}`, `want "notification"`},
		{"gopay id", `{"object":"hookinbox.delivery","provider":"gopay","id":"01","type":"notification","body":{"id":1,"state":"PAID"}}`, "positive decimal"},
		{"gopay body", `{"object":"hookinbox.delivery","provider":"gopay","id":"2","type":"notification","body":{"id":1,"state":"PAID"}}`, "not a payment with id 2"},
		{"no body", `{"object":"hookinbox.delivery","provider":"github","id":"d1","type":"ping"}`, "no body"},
		{"bad id", `{"object":"hookinbox.delivery","provider":"github","id":"d 1","type":"ping","body":{}}`, "event id"},
		{"twice", `{"object":"hookinbox.delivery","provider":"github","id":"d1","type":"ping","body":{}}` + "\n" +
			`{"object":"hookinbox.delivery","provider":"github","id":"d1","type":"ping","body":{}}`, "line 2: event github#d1 is on line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadEvents(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadEvents error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestShopRecordsLeaveOutWhatRunsMayDiffer(t *testing.T) {
	v := func(at int64, id string) effects.Version { return effects.Version{At: at, EventID: id} }
	st := func(readAt int64, invoice string) shop.State {
		return shop.State{
			Entitlements: []shop.Entitlement{
				{Holder: "cus_1", Source: "purchase", SourceID: "cs_1", Active: true, Version: v(100, "evt_1")},
				{Holder: "cus_1", Source: "subscription", SourceID: "sub_1", Active: true, Version: v(readAt, "evt_2")},
			},
			Subscriptions: []shop.Subscription{{ID: "sub_1", Status: "active", Customer: "cus_1", Version: v(readAt, "evt_3")}},
			Invoices:      []shop.Invoice{{Event: "stripe#evt_1", InvoiceID: invoice, Customer: "cus_1"}},
		}
	}
	if diff := cmp.Diff(ShopRecords(st(1, "in_a")), ShopRecords(st(2, "in_b"))); diff != "" {
		t.Errorf("read times and invoice IDs still differ:\n%s", diff)
	}
	changed := st(1, "in_a")
	changed.Entitlements[0].Version = v(101, "evt_9")
	if cmp.Equal(ShopRecords(st(1, "in_a")), ShopRecords(changed)) {
		t.Error("a purchase's version (from its event) is left out; it must be compared")
	}
}

func TestCompare(t *testing.T) {
	ref := Snapshot{
		Status:   map[webhook.Key]inbox.Status{"stripe#evt_1": inbox.Done, "stripe#evt_2": inbox.Ignored, "stripe#evt_3": inbox.Dead},
		Reason:   map[webhook.Key]string{"stripe#evt_3": "unknown price"},
		Ledger:   map[webhook.Key][]string{"stripe#evt_1": {"grant-access", "welcome-email"}},
		Business: []string{"access a", "email b"},
	}
	clone := func() Snapshot {
		s := ref
		s.Status = map[webhook.Key]inbox.Status{}
		for k, v := range ref.Status {
			s.Status[k] = v
		}
		s.Ledger = map[webhook.Key][]string{"stripe#evt_1": {"grant-access", "welcome-email"}}
		s.Business = append([]string(nil), ref.Business...)
		return s
	}
	if d := Compare(ref, clone()); len(d) != 0 {
		t.Errorf("Compare(same) = %q", d)
	}
	tests := []struct {
		name   string
		change func(*Snapshot)
		want   []string
	}{
		{"lost event", func(s *Snapshot) { delete(s.Status, "stripe#evt_2") }, []string{"event stripe#evt_2: status (none), reference IGNORED"}},
		{"other status", func(s *Snapshot) { s.Status["stripe#evt_1"] = inbox.Failed }, []string{"event stripe#evt_1: status FAILED, reference DONE"}},
		{"parked", func(s *Snapshot) {
			s.Status["stripe#evt_1"] = inbox.Dead
			s.Reason = map[webhook.Key]string{"stripe#evt_1": "receive 5 of 5", "stripe#evt_3": "unknown price"}
		}, []string{`event stripe#evt_1: status DEAD (parked for "receive 5 of 5"), reference DONE`}},
		{"other reason", func(s *Snapshot) { s.Reason = map[webhook.Key]string{"stripe#evt_3": "timeout"} },
			[]string{`event stripe#evt_3: parked for "timeout", reference for "unknown price"`}},
		{"missing effect", func(s *Snapshot) { s.Ledger["stripe#evt_1"] = []string{"grant-access"} },
			[]string{"event stripe#evt_1: effects [grant-access], reference [grant-access,welcome-email]"}},
		{"business record twice", func(s *Snapshot) { s.Business = append(s.Business, "email b") },
			[]string{"business record not in the reference: email b"}},
		{"business record missing", func(s *Snapshot) { s.Business = s.Business[:1] }, []string{"business record missing: email b"}},
		{"effect performed twice", func(s *Snapshot) { s.Performed = map[string]int{"email k1": 2, "email k2": 1} },
			[]string{"effect carried out more than once: email k1 ×2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := clone()
			tc.change(&got)
			if diff := cmp.Diff(tc.want, Compare(ref, got)); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithinKeepsOnlyTheCorpusRecords(t *testing.T) {
	ref := Snapshot{Status: map[webhook.Key]inbox.Status{"stripe#evt_1": inbox.Done},
		Business: []string{`access {"holder":"cus_1","active":true}`}}
	got := Snapshot{Business: []string{
		`access {"holder":"cus_1","active":true}`,
		`access {"holder":"cus_other","active":true}`,
		`email {"event":"stripe#evt_1","to":"x@example.com"}`,
	}}
	want := []string{`access {"holder":"cus_1","active":true}`, `email {"event":"stripe#evt_1","to":"x@example.com"}`}
	if diff := cmp.Diff(want, got.Within(ref).Business); diff != "" {
		t.Errorf("Within (-want +got):\n%s", diff)
	}
}

// fakeTarget answers deliveries from a script and counts what it was sent.
type fakeTarget struct {
	mu        sync.Mutex
	answers   map[webhook.Key][]int // statuses to answer, in order; then 200
	delivered map[webhook.Key]int
	requeued  map[webhook.Key]int
	busyFor   int // Busy reports one message this many times
}

func (f *fakeTarget) Deliver(_ context.Context, ev Event) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delivered[ev.Key()]++
	if a := f.answers[ev.Key()]; len(a) > 0 {
		f.answers[ev.Key()] = a[1:]
		if a[0] == 0 {
			return 0, errors.New("connection reset")
		}
		return a[0], nil
	}
	return 200, nil
}

func (f *fakeTarget) Requeue(_ context.Context, ev Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requeued[ev.Key()]++
	return nil
}

func (f *fakeTarget) Busy(context.Context) (int, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busyFor > 0 {
		f.busyFor--
		return 1, 0, nil
	}
	return 0, 0, nil
}

func (f *fakeTarget) Snapshot(context.Context, []webhook.Key) (Snapshot, error) {
	return Snapshot{}, nil
}

func TestRunDeliversDupTimesRetriesAndCopiesMessages(t *testing.T) {
	evs := []Event{{Provider: "stripe", ID: "evt_a", Type: "x"}, {Provider: "stripe", ID: "evt_b", Type: "x"}, {Provider: "stripe", ID: "evt_c", Type: "x"}}
	f := &fakeTarget{
		answers:   map[webhook.Key][]int{"stripe#evt_a": {500, 0}, "stripe#evt_c": {400, 400, 400}},
		delivered: map[webhook.Key]int{}, requeued: map[webhook.Key]int{}, busyFor: 2,
	}
	st, err := Run(context.Background(), f, evs, Config{Dup: 3, Shuffle: true, Concurrency: 4, QueueDups: true, Seed: 1, DelayJitter: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// evt_a: 500 and no answer are retried (2 more deliveries); evt_c's
	// three 400s are final answers, not retried, and get no queue copy.
	wantDelivered := map[webhook.Key]int{"stripe#evt_a": 5, "stripe#evt_b": 3, "stripe#evt_c": 3}
	wantRequeued := map[webhook.Key]int{"stripe#evt_a": 3, "stripe#evt_b": 3}
	if diff := cmp.Diff(wantDelivered, f.delivered); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantRequeued, f.requeued); diff != "" {
		t.Errorf("queue copies (-want +got):\n%s", diff)
	}
	want := Stats{Events: 3, Deliveries: 11, Accepted: 6, Retried: 2, Refused: map[int]int{400: 3}, QueueCopies: 6}
	if diff := cmp.Diff(want, st, cmp.FilterPath(func(p cmp.Path) bool {
		n := p.Last().String()
		return n == ".ToQuiet" || n == ".Elapsed"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

func TestRunReportsAPipelineThatStaysBusy(t *testing.T) {
	f := &fakeTarget{delivered: map[webhook.Key]int{}, requeued: map[webhook.Key]int{}, busyFor: 1 << 30}
	_, err := Run(context.Background(), f, []Event{{Provider: "stripe", ID: "evt_a", Type: "x"}}, Config{QuietWithin: 300 * time.Millisecond})
	if !errors.Is(err, ErrNotQuiet) {
		t.Errorf("Run error = %v, want ErrNotQuiet", err)
	}
}
