package inbox

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
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

func (m *metered) add(op string, cc *awsapi.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cc != nil && cc.CapacityUnits != nil {
		m.units[op] += *cc.CapacityUnits
	}
}

func (m *metered) PutItem(ctx context.Context, in *awsapi.PutItemInput) (*awsapi.PutItemOutput, error) {
	in.ReturnConsumedCapacity = awsapi.ReturnCapacityTotal
	out, err := m.dynamoDBAPI.PutItem(ctx, in)
	if err == nil {
		m.add("put "+skOf(in.Item), out.ConsumedCapacity)
	}
	return out, err
}

func (m *metered) UpdateItem(ctx context.Context, in *awsapi.UpdateItemInput) (*awsapi.UpdateItemOutput, error) {
	in.ReturnConsumedCapacity = awsapi.ReturnCapacityTotal
	out, err := m.dynamoDBAPI.UpdateItem(ctx, in)
	if err == nil {
		m.add("update "+skOf(in.Key), out.ConsumedCapacity)
	}
	return out, err
}

func skOf(item awsapi.Item) string {
	if s, ok := item["sk"].String(); ok {
		return s
	}
	return "?"
}

// TestWriteUnitsStayFlatWithPayloadSize measures what DESIGN.md argues: with
// the payload in its own item, every state change of an event costs one
// write unit whatever the payload's size; with the payload inside the status
// item, each change costs as many units as the payload has kilobytes.
// Rerun with -v to see the table (docs/performance.md quotes it).
func TestWriteUnitsStayFlatWithPayloadSize(t *testing.T) {
	emu := devstacktest.ForTest(t)
	devstacktest.SkipOnMoto(t, emu, devstack.MotoFlatCapacity)
	st := devstacktest.NewTestStack(t)
	ctx := context.Background()
	table := st.Tables["InboxTable"]
	now := time.Now()
	t.Logf("%-8s %-34s %-34s", "payload", "separate item: claim+payload / 2 changes", "in status item: claim / 2 changes")
	for _, size := range []int{1 << 10, 20 << 10, 100 << 10} {
		m := &metered{dynamoDBAPI: emu.LeanDynamoDB(), units: map[string]float64{}}
		s := NewDynamoDB(m, table)
		ev := webhook.Event{Provider: "stripe", ID: fmt.Sprintf("evt_wcu%d", size), Type: "checkout.session.completed", Raw: []byte(strings.Repeat("x", size))}
		it, err := s.Claim(ctx, Claim{Event: ev, At: now, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutPayload(ctx, it, ev.Raw); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lease(ctx, it.Key, "w", now, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Finish(ctx, it.Key, "w", Result{Status: Done, At: now}); err != nil {
			t.Fatal(err)
		}
		changes := m.units["update "+SortEvent]
		if changes != 2 {
			t.Errorf("%d-byte payload: lease + finish cost %.0f write units, want 2 (one each)", size, changes)
		}

		// The layout DESIGN.md warns against: the payload inside the status item.
		e := &metered{dynamoDBAPI: emu.LeanDynamoDB(), units: map[string]float64{}}
		item := marshal(Claim{Event: webhook.Event{Provider: "stripe", ID: ev.ID + "e", Type: ev.Type}, At: now, TTL: time.Hour}.NewItem())
		item["payload"] = awsapi.B(ev.Raw)
		if _, err := e.PutItem(ctx, &awsapi.PutItemInput{TableName: table, Item: item}); err != nil {
			t.Fatal(err)
		}
		embedded := NewDynamoDB(e, table)
		if _, err := embedded.Lease(ctx, webhook.NewKey("stripe", ev.ID+"e"), "w", now, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := embedded.Finish(ctx, webhook.NewKey("stripe", ev.ID+"e"), "w", Result{Status: Done, At: now}); err != nil {
			t.Fatal(err)
		}
		embeddedChanges := e.units["update "+SortEvent]
		if embeddedChanges <= changes && size > 1<<10 {
			t.Errorf("%d-byte payload: embedded layout cost %.0f units for 2 changes, want more than %.0f", size, embeddedChanges, changes)
		}
		t.Logf("%-8s %-34s %-34s", fmt.Sprintf("%d KiB", size>>10),
			fmt.Sprintf("%.0f + %.0f / %.0f", m.units["put "+SortEvent], m.units["update "+SortPayload], changes),
			fmt.Sprintf("%.0f / %.0f", e.units["put "+SortEvent], embeddedChanges))
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
	s := NewDynamoDB(emu.LeanDynamoDB(), st.Tables["InboxTable"])
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
