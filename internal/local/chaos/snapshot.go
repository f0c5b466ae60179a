package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/webhook"
)

// Snapshot is what a run left behind, in a form two runs can be compared
// in: nothing that legitimately differs between runs (read times, IDs the
// business API made up) is in it.
type Snapshot struct {
	// Status is each event's inbox status; an event never claimed is
	// missing.
	Status map[webhook.Key]inbox.Status
	// Reason is the last error of each event parked DEAD.
	Reason map[webhook.Key]string
	// Ledger is each event's recorded effects, by name, sorted.
	Ledger map[webhook.Key][]string
	// Business is the business state, one line a record (see
	// shopRecords), sorted.
	Business []string
	// Performed counts, per idempotency key, the effects the business
	// APIs actually carried out (emails sent, distinct invoices created),
	// when the target can see its stand-ins; nil when it cannot.
	Performed map[string]int
}

// Effects returns how many effects the ledger records.
func (s Snapshot) Effects() int {
	n := 0
	for _, names := range s.Ledger {
		n += len(names)
	}
	return n
}

// Duplicated returns the idempotency keys whose effect was carried out
// more than once, sorted.
func (s Snapshot) Duplicated() []string {
	var out []string
	for k, n := range s.Performed {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	sort.Strings(out)
	return out
}

// shopRecords flattens the example shop's state into one line a record
// (Stripe's customers' access, subscriptions, emails and invoices; the
// other providers' orders, stock and loyalty points),
// leaving out what differs between two correct runs: when a subscription
// was read from Stripe's API (and so which event caused that read), the
// same for the entitlement a subscription gives, and the IDs Stripe gave
// the invoices it created.
func shopRecords(st shop.State) []string {
	var out []string
	add := func(kind string, v any) {
		b, _ := json.Marshal(v)
		out = append(out, kind+" "+string(b))
	}
	for _, a := range st.Access {
		add("access", a)
	}
	for _, e := range st.Entitlements {
		if e.Source == "subscription" {
			// Written from the subscription as read from Stripe's API:
			// versioned by that read.
			e.Version = effects.Version{}
		}
		add("entitlement", e)
	}
	for _, s := range st.Subscriptions {
		s.Version = effects.Version{}
		add("subscription", s)
	}
	for _, e := range st.Emails {
		add("email", e)
	}
	for _, i := range st.Invoices {
		i.InvoiceID = ""
		add("invoice", i)
	}
	for _, o := range st.Orders {
		add("order", o)
	}
	for _, l := range st.Stock {
		add("stock", l)
	}
	for _, l := range st.Loyalty {
		add("loyalty", l)
	}
	sort.Strings(out)
	return out
}

// Compare lists every difference between a reference snapshot and a
// chaos run's, one line each: events whose status, parking reason or
// ledger differ, business records only one run has, and effects carried
// out more than once. No lines means the runs agree.
func Compare(ref, got Snapshot) []string {
	var diffs []string
	keys := map[webhook.Key]bool{}
	for k := range ref.Status {
		keys[k] = true
	}
	for k := range got.Status {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		rs, gs := ref.Status[k], got.Status[k]
		switch {
		case rs != gs && gs == inbox.Dead:
			diffs = append(diffs, fmt.Sprintf("event %s: status DEAD (parked for %q), reference %s", k, got.Reason[k], orNone(string(rs))))
		case rs != gs:
			diffs = append(diffs, fmt.Sprintf("event %s: status %s, reference %s", k, orNone(string(gs)), orNone(string(rs))))
		case rs == inbox.Dead && ref.Reason[k] != got.Reason[k]:
			diffs = append(diffs, fmt.Sprintf("event %s: parked for %q, reference for %q", k, got.Reason[k], ref.Reason[k]))
		}
		if r, g := strings.Join(ref.Ledger[k], ","), strings.Join(got.Ledger[k], ","); r != g {
			diffs = append(diffs, fmt.Sprintf("event %s: effects [%s], reference [%s]", k, g, r))
		}
	}
	onlyRef, onlyGot := setDiff(ref.Business, got.Business)
	for _, r := range onlyRef {
		diffs = append(diffs, "business record missing: "+r)
	}
	for _, r := range onlyGot {
		diffs = append(diffs, "business record not in the reference: "+r)
	}
	for _, d := range got.Duplicated() {
		diffs = append(diffs, "effect carried out more than once: "+d)
	}
	return diffs
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func sortedKeys(m map[webhook.Key]bool) []webhook.Key {
	out := make([]webhook.Key, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// setDiff returns the lines only in a and only in b, each list sorted;
// a line twice in a and once in b counts once in the first list.
func setDiff(a, b []string) (onlyA, onlyB []string) {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for s, n := range count {
		for ; n > 0; n-- {
			onlyA = append(onlyA, s)
		}
		for ; n < 0; n++ {
			onlyB = append(onlyB, s)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return onlyA, onlyB
}

// Within returns s with only the business records that concern what ref
// concerns: a record is kept when one of its holder, customer, id,
// source_id, event or payment values is one of ref's records' or one of ref's
// event keys. Use it for a stack that held records before the run.
func (s Snapshot) Within(ref Snapshot) Snapshot {
	tokens := map[string]bool{}
	for k := range ref.Status {
		tokens[string(k)] = true
	}
	for _, line := range ref.Business {
		for _, t := range recordTokens(line) {
			tokens[t] = true
		}
	}
	var kept []string
	for _, line := range s.Business {
		for _, t := range recordTokens(line) {
			if tokens[t] {
				kept = append(kept, line)
				break
			}
		}
	}
	s.Business = kept
	return s
}

// recordTokens returns the identifying values of one shopRecords or
// tableRecords line.
func recordTokens(line string) []string {
	_, js, _ := strings.Cut(line, " ")
	var m map[string]any
	if json.Unmarshal([]byte(js), &m) != nil {
		return nil
	}
	var out []string
	for _, f := range []string{"holder", "customer", "id", "source_id", "event", "payment"} {
		v, ok := m[f].(string)
		if attr, isAttr := m[f].(map[string]any); isAttr {
			// A tableRecords item: the attribute's value as the SDK holds it.
			v, ok = attr["Value"].(string)
		}
		if ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// depthReader is the events queue call busy makes.
type depthReader interface {
	Depth(ctx context.Context) (queue.Depth, error)
}

// pendingLister is the inbox call busy makes.
type pendingLister interface {
	Pending(ctx context.Context, cutoff time.Time, limit int) ([]inbox.Item, error)
}

// busy counts the messages of the events queue (visible, in flight,
// delayed) and the unfinished events of the inbox.
func busy(ctx context.Context, q depthReader, in pendingLister) (int, int, error) {
	d, err := q.Depth(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("events queue: %w", err)
	}
	pending, err := in.Pending(ctx, time.Now().Add(24*time.Hour), 1000)
	if err != nil {
		return 0, 0, err
	}
	return d.Total(), len(pending), nil
}

// inboxReader and ledgerReader are the reads snapshot makes.
type (
	inboxReader interface {
		Get(ctx context.Context, key webhook.Key) (inbox.Item, error)
	}
	ledgerReader interface {
		Records(ctx context.Context, key webhook.Key) ([]effects.Record, error)
	}
)

// snapshot reads the status and ledger of every key (eight at a time)
// and the business's state.
func snapshot(ctx context.Context, in inboxReader, ledger ledgerReader, business businessReader, keys []webhook.Key) (Snapshot, error) {
	s := Snapshot{Status: map[webhook.Key]inbox.Status{}, Reason: map[webhook.Key]string{}, Ledger: map[webhook.Key][]string{}}
	var mu sync.Mutex
	var errs []error
	work := make(chan webhook.Key)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				it, err := in.Get(ctx, k)
				if errors.Is(err, inbox.ErrNotFound) {
					continue
				}
				var recs []effects.Record
				if err == nil {
					recs, err = ledger.Records(ctx, k)
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					s.Status[k] = it.Status
					if it.Status == inbox.Dead {
						s.Reason[k] = it.LastError
					}
					for _, r := range recs {
						s.Ledger[k] = append(s.Ledger[k], r.Effect)
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		return s, fmt.Errorf("snapshot: %w", errors.Join(errs...))
	}
	records, err := business(ctx)
	if err != nil {
		return s, fmt.Errorf("snapshot: business state: %w", err)
	}
	s.Business = records
	return s, nil
}
