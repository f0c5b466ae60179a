package inbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// metered asks for ConsumedCapacity on every write and adds it up, by
// operation, the way DynamoDB bills it (dynalite charges the larger of the
// old and new item, as DynamoDB does; index writes are not counted).
type metered struct {
	dynamoDBAPI
	mu    sync.Mutex
	units map[string]float64
}

// add adds the capacity a write consumed to op's total, when it
// succeeded, and returns the write's error.
func (m *metered) add(op string, err error, consumed func() *types.ConsumedCapacity) error {
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if cc := consumed(); cc != nil && cc.CapacityUnits != nil {
		m.units[op] += *cc.CapacityUnits
	}
	return nil
}

// billedTable returns the test stack's inbox table on an emulator that
// sizes items and bills writes as DynamoDB does, and a function that
// returns a new metered client of it.
func billedTable(t *testing.T) (meter func() *metered, table string) {
	t.Helper()
	emu := devstacktest.ForTest(t)
	devstacktest.SkipOnMoto(t, emu, devstack.MotoFlatCapacity)
	table = devstacktest.NewTestStack(t).Tables["InboxTable"]
	return func() *metered { return &metered{dynamoDBAPI: emu.DynamoDB(), units: map[string]float64{}} }, table
}

func (m *metered) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := m.dynamoDBAPI.PutItem(ctx, in, opts...)
	return out, m.add("put "+skOf(in.Item), err, func() *types.ConsumedCapacity { return out.ConsumedCapacity })
}

func (m *metered) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := m.dynamoDBAPI.UpdateItem(ctx, in, opts...)
	return out, m.add("update "+skOf(in.Key), err, func() *types.ConsumedCapacity { return out.ConsumedCapacity })
}

// TestWriteUnitsStayFlatWithPayloadSize measures what the inbox's layout
// keeps: every write of an event's status item (the
// claim and each state change) costs one write unit whatever the
// payload's size, because a payload rides in the claim only when the item
// stays within 1 KB, and otherwise has its own item, written once; with
// the raw payload inside the status item, each change would cost as many
// units as the payload has kilobytes. The payloads are Stripe events
// (verifytest.StripeEvent). Rerun with -v to see the table
// (docs/performance.md quotes it).
func TestWriteUnitsStayFlatWithPayloadSize(t *testing.T) {
	meter, table := billedTable(t)
	ctx := context.Background()
	now := time.Now()
	// leaseAndFinish makes the two state changes of an event handled at once.
	leaseAndFinish := func(s *DynamoDB, key webhook.Key) {
		t.Helper()
		if _, err := s.Lease(ctx, key, processorOwner, now, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Finish(ctx, key, processorOwner, Result{Status: Done, Outcome: "no handler for customer.created", At: now, Indexed: true}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%-8s %-8s %-40s %-34s", "payload", "layout", "as stored: claim + payload / 2 changes", "raw in status item: claim / 2 changes")
	for _, size := range []int{1 << 10, 2 << 10, 10 << 10, 100 << 10} {
		m := meter()
		s := NewDynamoDB(m, table)
		id := fmt.Sprintf("evt_wcu%d", size)
		raw := verifytest.StripeEvent("customer.created", id, now, verifytest.WithSize(size))
		ev := webhook.Event{Provider: "stripe", ID: id, Type: "customer.created", Raw: raw}
		// Three subjects ride on the claim until the finish drops them.
		c := Claim{Event: ev, At: now, TTL: DefaultTTL, Subjects: hashes("cus", "email", "shop")}.Prepared()
		it, err := s.Claim(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		layout := "inline"
		if !c.Inline() {
			layout = "separate"
			if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
				t.Fatal(err)
			}
		}
		leaseAndFinish(s, it.Key)
		claimUnits, changes := m.units["put "+SortEvent], m.units["update "+SortEvent]
		if claimUnits != 1 || changes != 2 {
			t.Errorf("%d-byte payload (%s): claim %.0f units, lease + finish %.0f; want 1 and 2 (one per write)", len(raw), layout, claimUnits, changes)
		}
		if size <= 1<<10 && (layout != "inline" || m.units["update "+SortPayload] != 0) {
			t.Errorf("%d-byte payload: %s, %.0f units on a payload item; want inline, none", len(raw), layout, m.units["update "+SortPayload])
		}

		// The layout the inbox avoids: the raw payload inside the status item, billed at every state change.
		e := meter()
		item := marshal(Claim{Event: webhook.Event{Provider: "stripe", ID: ev.ID + "e", Type: ev.Type}, At: now, TTL: time.Hour}.NewItem())
		item["payload"] = &types.AttributeValueMemberB{Value: ev.Raw}
		if _, err := e.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
		leaseAndFinish(NewDynamoDB(e, table), webhook.NewKey("stripe", ev.ID+"e"))
		embeddedChanges := e.units["update "+SortEvent]
		if embeddedChanges <= changes && size > 1<<10 {
			t.Errorf("%d-byte payload: embedded layout cost %.0f units for 2 changes, want more than %.0f", size, embeddedChanges, changes)
		}
		t.Logf("%-8s %-8s %-40s %-34s", fmt.Sprintf("%d B", len(raw)), layout,
			fmt.Sprintf("%.0f + %.0f / %.0f", claimUnits, m.units["update "+SortPayload], changes),
			fmt.Sprintf("%.0f / %.0f", e.units["put "+SortEvent], embeddedChanges))
	}
}

// TestRemovingAPayloadAgainWritesNothing: an erasure that comes back to
// an event it erased (its attempt cut short, a second request) reads it
// and writes nothing; one that finds it unfinished marks it once.
func TestRemovingAPayloadAgainWritesNothing(t *testing.T) {
	meter, table := billedTable(t)
	ctx := context.Background()
	now := time.Now()
	for _, finished := range []bool{true, false} {
		s := NewDynamoDB(meter(), table)
		ev := webhook.Event{Provider: "stripe", ID: fmt.Sprintf("evt_again_%v", finished), Type: "customer.created",
			Raw: verifytest.StripeEvent("customer.created", "evt_again", now)}
		it, err := s.Claim(ctx, Claim{Event: ev, At: now, TTL: DefaultTTL})
		if err != nil {
			t.Fatal(err)
		}
		if finished {
			if _, err := s.Lease(ctx, it.Key, processorOwner, now, time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Finish(ctx, it.Key, processorOwner, Result{Status: Done, At: now}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.RemovePayload(ctx, it.Key, RemovedErased, now); err != nil {
			t.Fatal(err)
		}
		again := meter()
		f, err := NewDynamoDB(again, table).RemovePayload(ctx, it.Key, RemovedErased, now.Add(time.Minute))
		if err != nil || len(again.units) != 0 {
			t.Errorf("finished %v: RemovePayload again = %+v, %v; wrote %v, want nothing", finished, f, err, again.units)
		}
	}
}

// hashes returns subject hashes (privacy.Hasher's form) of names.
func hashes(names ...string) []string {
	var out []string
	for _, n := range names {
		sum := sha256.Sum256([]byte(n))
		out = append(out, hex.EncodeToString(sum[:]))
	}
	return out
}

// processorOwner is as long as the processor's lease owners (12 hex
// digits, "/", an SQS message id).
const processorOwner = "0123456789ab/5fea7756-0ea4-451a-a703-a558b933e274"

// incompressible returns n bytes that flate cannot shrink, the same for the
// same n.
func incompressible(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return b
}

// TestInlineItemCostsItsUnitsInEveryState stores the largest payload
// that rides in a one-unit claim, and the largest that rides in a
// two-unit one (whose payload item would cost three units), for the
// longest key hookinbox accepts and for a short one, and takes the item
// through the states that make it largest (a lease taken over from
// another worker, a failure with a short error, a second lease, done):
// each write costs its units on dynalite, which sizes items as DynamoDB
// does, so an inline event never costs more than one kept apart. It also
// measures how close the inbox's own size count (itemBytes) is to the
// emulator's.
func TestInlineItemCostsItsUnitsInEveryState(t *testing.T) {
	meter, table := billedTable(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	for _, tc := range []struct {
		ev   webhook.Event
		want int // write units of each write
	}{
		{webhook.Event{Provider: "stripe", ID: "evt_1QbXq2Lkdfj3Sdfo8Rt2VbNm", Type: "checkout.session.completed"}, 1},
		{webhook.Event{Provider: strings.Repeat("p", 32), ID: strings.Repeat("e", webhook.MaxEventIDLen), Type: "customer.subscription.trial_will_end"}, 1},
		{webhook.Event{Provider: "stripe", ID: "evt_2QbXq2Lkdfj3Sdfo8Rt2VbNm", Type: "checkout.session.completed"}, 2},
		{webhook.Event{Provider: strings.Repeat("p", 32), ID: strings.Repeat("f", webhook.MaxEventIDLen), Type: "customer.subscription.trial_will_end"}, 2},
	} {
		ev := tc.ev
		// The largest incompressible payload that still rides inline in
		// an item of tc.want units.
		n := 0
		for inlineUnits(ev.Key(), n+1) < tc.want {
			n++
		}
		for ev.Raw = incompressible(n + 1); (Claim{Event: ev, At: now, TTL: DefaultTTL}).Inline(); ev.Raw = incompressible(n + 1) {
			n++
		}
		ev.Raw = incompressible(n)
		if n == 0 || inlineUnits(ev.Key(), n) != tc.want || !(Claim{Event: ev, At: now, TTL: DefaultTTL}).Inline() {
			t.Fatalf("key of %d bytes: no payload rides inline in %d units", len(ev.Key()), tc.want)
		}
		m := meter()
		s := NewDynamoDB(m, table)
		// Two subjects ride on the claim (the room it keeps for them).
		c := Claim{Event: ev, At: now, TTL: DefaultTTL, Subjects: hashes("cus", "email")}.Prepared()
		it, err := s.Claim(ctx, c)
		if err != nil || string(it.Payload) != string(ev.Raw) {
			t.Fatalf("Claim: %v, inline %v", err, it.Payload != nil)
		}
		step := func(what string, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			units := m.units["put "+SortEvent] + m.units["update "+SortEvent]
			m.units = map[string]float64{}
			if units != float64(tc.want) {
				t.Errorf("key of %d bytes, %d-byte payload: %s cost %.0f write units, want %d", len(it.Key), n, what, units, tc.want)
			}
		}
		step("claim", nil)
		_, err = s.Lease(ctx, it.Key, processorOwner, now, time.Minute)
		step("lease", err)
		other := strings.Replace(processorOwner, "0123", "3210", 1)
		_, err = s.Lease(ctx, it.Key, other, now.Add(2*time.Minute), time.Minute)
		step("lease taken over", err)
		_, err = s.Finish(ctx, it.Key, other, Result{Status: Failed, Error: "invoice: stripe: 503 Service Unavailable", At: now})
		step("finish FAILED", err)
		_, err = s.Lease(ctx, it.Key, processorOwner, now.Add(3*time.Minute), time.Minute)
		step("lease after a failure", err)
		_, err = s.Finish(ctx, it.Key, processorOwner, Result{Status: Done, Outcome: "no handler for " + ev.Type, At: now})
		step("finish DONE", err)

		// The emulator's size of the claim item: pad it until it costs one
		// unit more.
		probe := it
		probe.Key = webhook.Key(string(it.Key[:len(it.Key)-1]) + "z")
		item := marshalClaim(probe, c.packed)
		counted := itemBytes(probe, len(c.packed))
		pad := 0
		for ; ; pad++ {
			item["x"] = &types.AttributeValueMemberB{Value: make([]byte, pad)}
			out, err := meter().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
			if err != nil {
				t.Fatal(err)
			}
			if *out.ConsumedCapacity.CapacityUnits > float64(tc.want) {
				break
			}
		}
		actual := tc.want*inlineItemBytes + 1 - len("x") - pad
		t.Logf("key of %d bytes: %d-byte payload inline (%d compressed) in %d units; claim item %d bytes on dynalite, %d counted by itemBytes; %d left for later states",
			len(it.Key), n, len(c.packed), tc.want, actual, counted, tc.want*inlineItemBytes-actual)
		if counted < actual {
			t.Errorf("itemBytes counts %d bytes, the emulator %d: it must never count less", counted, actual)
		}
	}
}

// TestLargestPayloadFitsTheItem measures MaxPayloadBytes against
// DynamoDB's 400 KB item limit on dynalite, which enforces it as DynamoDB
// does (attribute names and values): a payload of MaxPayloadBytes under
// the longest key is stored, one of 400 KiB is refused. Rerun with -v
// for the item's size and headroom (docs/reliability.md quotes it).
func TestLargestPayloadFitsTheItem(t *testing.T) {
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	s := NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	ctx := context.Background()
	now := time.Now()
	longest := webhook.Event{
		Provider: strings.Repeat("p", 32), ID: strings.Repeat("e", webhook.MaxEventIDLen),
		Type: "checkout.session.completed", Raw: []byte(strings.Repeat("x", MaxPayloadBytes)),
	}
	it := Claim{Event: longest, At: now, TTL: DefaultTTL}.NewItem()
	if err := s.PutPayload(ctx, it, longest.Raw); err != nil {
		t.Fatalf("a %d-byte payload under a %d-byte key: %v", MaxPayloadBytes, len(it.Key), err)
	}
	got, err := s.Payload(ctx, it.Key)
	if err != nil || len(got) != MaxPayloadBytes {
		t.Fatalf("stored payload: %d bytes, %v", len(got), err)
	}
	// The item as DynamoDB sizes it: names plus values (a number is about
	// one byte per two digits, plus one).
	size := 0
	for name, v := range map[string]string{
		"pk": string(it.Key), "sk": SortPayload, "received_at": formatTime(it.ReceivedAt),
	} {
		size += len(name) + len(v)
	}
	size += len("payload") + MaxPayloadBytes
	size += len("expires_at") + len(fmt.Sprint(it.ExpiresAt.Unix()))/2 + 1
	const limit = 400 << 10
	t.Logf("payload item at MaxPayloadBytes (%d) with a %d-byte key: %d bytes of %d, %d bytes of headroom", MaxPayloadBytes, len(it.Key), size, limit, limit-size)
	if size > limit {
		t.Errorf("item size %d is over the %d-byte limit", size, limit)
	}

	over := webhook.Event{Provider: "stripe", ID: "evt_over", Raw: []byte(strings.Repeat("x", limit))}
	if err := s.PutPayload(ctx, Claim{Event: over, At: now, TTL: DefaultTTL}.NewItem(), over.Raw); err == nil {
		t.Errorf("a %d-byte payload was stored; the emulator does not enforce the item limit, so this test proves nothing", limit)
	}
}
