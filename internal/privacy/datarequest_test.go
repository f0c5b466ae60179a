package privacy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// bulkyStore is the in-memory store whose events each keep a body in S3
// and three effect results, each footprint read taking read, and whose
// data request records are written to a DynamoDB table, with its 400 KB
// item limit.
type bulkyStore struct {
	*inboxtest.Memory
	records *inbox.DynamoDB
	read    time.Duration
}

func (s bulkyStore) Footprint(ctx context.Context, key webhook.Key) (inbox.Footprint, error) {
	select {
	case <-time.After(s.read):
	case <-ctx.Done():
		return inbox.Footprint{}, ctx.Err()
	}
	f, err := s.Memory.Footprint(ctx, key)
	f.Object = inbox.BodyObject(key, inbox.PayloadSHA256([]byte(key)))
	f.Effects = []string{"shop.invoice", "shop.receipt-email", "destination.warehouse"}
	return f, err
}

func (s bulkyStore) RecordDataRequest(ctx context.Context, r inbox.DataRequest) error {
	return s.records.RecordDataRequest(ctx, r)
}

// TestADataRequestOfThousandsOfEventsIsRecorded: a data request for a
// person with 1,500 events, each kept in S3 and with three effect
// results, is answered within its invocation and recorded within
// DynamoDB's item limit: the record lists as many events as it holds
// and says that more exist; hookinbox export lists them all. So it is
// when each footprint read is slow: the listing stops before the
// invocation's deadline.
func TestADataRequestOfThousandsOfEventsIsRecorded(t *testing.T) {
	ctx := context.Background()
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h := privacy.NewHasher(privacy.Keys{"key"})
	sub := []provider.Subject{provider.EmailSubject("jane@example.com")}
	hashes, _ := h.Index(ctx, sub)
	mem := inboxtest.NewMemory()
	for i := range 1500 {
		ev := webhook.Event{Provider: "shopify", ID: fmt.Sprintf("b54557e4-bdd9-4b37-8a5f-%012d", i), Type: "orders/create", Raw: []byte(`{}`)}
		it, err := mem.Claim(ctx, inbox.Claim{Event: ev, At: at, TTL: time.Hour})
		if err == nil {
			err = mem.IndexSubjects(ctx, it.Key, hashes, it.ExpiresAt)
		}
		if err != nil {
			t.Fatal(err)
		}
		finish(t, mem, it.Key, inbox.Done, at)
	}
	records := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	for _, tc := range []struct {
		name string
		read time.Duration
	}{{"quick reads", 0}, {"slow reads", 10 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			e := privacy.NewEraser(bulkyStore{Memory: mem, records: records, read: tc.read}, h, func() time.Time { return at })
			ctx, cancel := context.WithTimeout(ctx, 8*time.Second) // the deadline's margin is 5 s
			defer cancel()
			rep, err := e.AnswerDataRequest(ctx, sub, privacy.Within{}, "shopify customers/data_request "+tc.name, "data request 1")
			if err != nil {
				t.Fatalf("AnswerDataRequest: %v", err)
			}
			if ctx.Err() != nil {
				t.Error("the data request ran into its deadline")
			}
			reqs, err := records.DataRequests(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var held privacy.Report
			for _, r := range reqs {
				if r.By == "shopify customers/data_request "+tc.name {
					if err := json.Unmarshal(r.Report, &held); err != nil {
						t.Fatal(err)
					}
				}
			}
			if len(held.Events) == 0 || !held.Truncated || len(held.Events) != len(rep.Events) {
				t.Errorf("recorded %d events, truncated %v (answered %d); want some listed and the rest said to exist", len(held.Events), held.Truncated, len(rep.Events))
			}
		})
	}
}
