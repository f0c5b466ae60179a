package inboxtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

func payloadStoredOnce(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	key := webhook.Key("stripe#evt_pay")
	if _, err := s.Payload(ctx, key); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Payload before put: err = %v, want ErrNotFound", err)
	}
	for i, body := range []string{`{"n":1}`, `{"n":2}`} {
		it := inbox.Claim{Event: Event("evt_pay"), At: t0.Add(time.Duration(i) * time.Second), TTL: time.Hour}.NewItem()
		if err := s.PutPayload(ctx, it, []byte(body)); err != nil {
			t.Fatalf("PutPayload: %v", err)
		}
	}
	got, err := s.Payload(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"n":1}` {
		t.Errorf("Payload = %s, want the first one stored", got)
	}
}

func payloadWithoutClaimAndClaimWithoutPayload(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	// The receiver writes the claim and a large payload at the same
	// time, so either may land first, or alone.
	ev := LargeEvent("evt_order")
	c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}
	if err := s.PutPayload(ctx, c.NewItem(), ev.Raw); err != nil {
		t.Fatalf("PutPayload before its claim: %v", err)
	}
	if _, err := s.Get(ctx, ev.Key()); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("a payload alone made a status item: err = %v", err)
	}
	if _, err := s.Claim(ctx, c); err != nil {
		t.Fatalf("Claim after its payload: %v", err)
	}
	// A claim whose payload write failed (and whose release failed
	// too): a later delivery of the event stores the payload.
	lost := LargeEvent("evt_lost")
	it, err := s.Claim(ctx, inbox.Claim{Event: lost, At: t0, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
		t.Fatalf("Payload of a claim without one: err = %v, want ErrNotFound", err)
	}
	dup := inbox.Claim{Event: lost, At: t0.Add(time.Minute), TTL: time.Hour}
	if _, err := s.Claim(ctx, dup); !errors.Is(err, inbox.ErrAlreadyClaimed) {
		t.Fatalf("later delivery: err = %v, want ErrAlreadyClaimed", err)
	}
	if err := s.PutPayload(ctx, dup.NewItem(), lost.Raw); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Payload(ctx, it.Key); err != nil || string(got) != string(lost.Raw) {
		t.Errorf("Payload after the later delivery = %q, %v; want the event's bytes", got, err)
	}
}

func largePayloadKeepsItsOwnItem(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	ev := LargeEvent("evt_large")
	c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}
	if c.Inline() {
		t.Fatalf("a %d-byte payload rides in its claim", len(ev.Raw))
	}
	it, err := s.Claim(ctx, c)
	if err != nil || it.Payload != nil {
		t.Fatalf("Claim = payload %d bytes, %v; want none", len(it.Payload), err)
	}
	if _, err := s.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Payload before PutPayload: %v, want ErrNotFound", err)
	}
	if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
		t.Fatal(err)
	}
	if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(ev.Raw) {
		t.Errorf("Payload = %d bytes, %v; want the event's %d", len(raw), err, len(ev.Raw))
	}
	got, err := s.Lease(ctx, it.Key, "w1", t0, time.Minute)
	if err != nil || got.Payload != nil {
		t.Errorf("Lease = payload %d bytes, %v; want none (the processor reads the payload item)", len(got.Payload), err)
	}
}

func hugePayloadIsKeptAsAnObjectTheClaimNames(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	ev := HugeEvent("evt_huge")
	c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}.Prepared()
	if !c.External() || c.Inline() {
		t.Fatalf("a %d-byte payload: External %v, Inline %v; want kept in S3", len(ev.Raw), c.External(), c.Inline())
	}
	it, err := s.Claim(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if it.PayloadObject == "" || it.PayloadSHA256 != inbox.PayloadSHA256(ev.Raw) {
		t.Fatalf("Claim = object %q, hash %s; want both", it.PayloadObject, it.PayloadSHA256)
	}
	if got, err := s.Get(ctx, it.Key); err != nil || got.PayloadObject != it.PayloadObject {
		t.Errorf("Get = object %q, %v; want %q", got.PayloadObject, err, it.PayloadObject)
	}
	if _, err := s.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Payload before PutPayload: %v, want ErrNotFound", err)
	}
	// The object lost, the processor stores what the provider's API
	// serves: it stands in until the object is there.
	fetched := Event("evt_huge").Raw
	if err := s.PutPayload(ctx, c.PayloadItem(), fetched); err != nil {
		t.Fatal(err)
	}
	if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(fetched) {
		t.Errorf("Payload with the object missing = %d bytes, %v; want the fetched %d", len(raw), err, len(fetched))
	}
	if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
		t.Fatal(err)
	}
	if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(ev.Raw) {
		t.Errorf("Payload = %d bytes, %v; want the event's %d", len(raw), err, len(ev.Raw))
	}
	// Only its claim names an object: a payload this large stored for
	// an item without one has nowhere to go.
	if err := s.PutPayload(ctx, inbox.Item{Key: it.Key, ReceivedAt: t0}, ev.Raw); !errors.Is(err, inbox.ErrNoBodyLocation) {
		t.Errorf("PutPayload without an object: %v, want ErrNoBodyLocation", err)
	}
}

func hugeBodyFetchedAgainIsKeptUnderItsOwnHash(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	ev := HugeEvent("evt_hugefetched")
	c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}
	if _, err := s.Claim(ctx, c); err != nil {
		t.Fatal(err)
	}
	// The object was never written; the processor stores what the
	// provider's API serves, other bytes as large.
	leased := lease(t, s, ev.Key(), "w1", t0)
	fetched := append([]byte(nil), ev.Raw...)
	fetched[len(fetched)-3] = 'y'
	if err := s.PutPayload(ctx, leased, fetched); err != nil {
		t.Fatal(err)
	}
	want := inbox.BodyObject(ev.Key(), inbox.PayloadSHA256(fetched))
	if got, err := s.Get(ctx, ev.Key()); err != nil || got.PayloadObject != want || got.PayloadSHA256 != inbox.PayloadSHA256(ev.Raw) {
		t.Errorf("Get = object %q, hash %s, %v; want the fetched body's object %q, the delivery's hash kept", got.PayloadObject, got.PayloadSHA256, err, want)
	}
	for _, when := range []string{"stored", "and after the delivery's own bytes came late"} {
		if raw, err := s.Payload(ctx, ev.Key()); err != nil || string(raw) != string(fetched) {
			t.Errorf("Payload %s = %d bytes, %v; want the fetched %d", when, len(raw), err, len(fetched))
		}
		if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
			t.Fatal(err)
		}
	}
	// Once finished and erased, a body fetched again is not kept.
	if _, err := s.Finish(ctx, ev.Key(), "w1", inbox.Result{Status: inbox.Done, At: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RemovePayload(ctx, ev.Key(), inbox.RemovedErased, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPayload(ctx, leased, fetched); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, ev.Key()); err != nil || got.PayloadObject != "" {
		t.Errorf("Get after the payload was removed and fetched again = object %q, %v; want none", got.PayloadObject, err)
	}
}

// inlinePayloadTravelsWithTheItem checks that a payload small enough is
// written by the claim and comes back with every read and state change of
// the item: the processor's lease hands it over without another read.
func inlinePayloadTravelsWithTheItem(t *testing.T, s inbox.Store, ev webhook.Event) {
	ctx := context.Background()
	c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}
	if !c.Inline() {
		t.Fatalf("a %d-byte payload does not ride in its claim", len(ev.Raw))
	}
	it, err := s.Claim(ctx, c)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	check := func(what string, got inbox.Item, err error) {
		t.Helper()
		if err != nil || string(got.Payload) != string(ev.Raw) {
			t.Errorf("%s: payload %q, %v; want the event's bytes", what, got.Payload, err)
		}
	}
	check("Claim", it, nil)
	got, err := s.Get(ctx, it.Key)
	check("Get", got, err)
	if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(ev.Raw) {
		t.Errorf("Payload = %q, %v; want the event's bytes", raw, err)
	}
	later := Event(ev.ID)
	later.Raw = []byte(`{"id":"evt_inline","changed":true}`)
	got, err = s.Claim(ctx, inbox.Claim{Event: later, At: t0.Add(time.Minute), TTL: time.Hour})
	if !errors.Is(err, inbox.ErrAlreadyClaimed) {
		t.Fatalf("duplicate Claim: %v, want ErrAlreadyClaimed", err)
	}
	check("duplicate Claim (the first bytes)", got, nil)
	got, err = s.Lease(ctx, it.Key, "w1", t0.Add(time.Minute), time.Minute)
	check("Lease", got, err)
	got, err = s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Failed, Error: "ses: throttled", At: t0.Add(time.Minute)})
	check("Finish", got, err)
	got, err = s.Requeue(ctx, it.Key, t0.Add(time.Hour))
	check("Requeue", got, err)
	pending, err := s.Pending(ctx, t0.Add(2*time.Hour), 0)
	if err != nil || len(pending) != 1 {
		t.Fatalf("Pending: %+v, %v; want the event", pending, err)
	}
	// The pending index projects the status, not the payload: an entry
	// costs one write unit however large the item.
	if p := pending[0]; p.Payload != nil || p.Key != it.Key || p.Status != inbox.Failed || p.EventType != ev.Type {
		t.Errorf("Pending: %+v; want the FAILED event's key, status and type, without its payload", p)
	}
	// A payload item (stored for the key by an older claim, or by a
	// fetch) does not hide the bytes the claim carries.
	if err := s.PutPayload(ctx, inbox.Claim{Event: later, At: t0.Add(time.Minute), TTL: time.Hour}.PayloadItem(), later.Raw); err != nil {
		t.Fatal(err)
	}
	if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(ev.Raw) {
		t.Errorf("Payload beside a payload item = %q, %v; want the claim's", raw, err)
	}
}
