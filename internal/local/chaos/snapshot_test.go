package chaos

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/webhook"
)

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
	if diff := cmp.Diff(shopRecords(st(1, "in_a")), shopRecords(st(2, "in_b"))); diff != "" {
		t.Errorf("read times and invoice IDs still differ:\n%s", diff)
	}
	changed := st(1, "in_a")
	changed.Entitlements[0].Version = v(101, "evt_9")
	if cmp.Equal(shopRecords(st(1, "in_a")), shopRecords(changed)) {
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
