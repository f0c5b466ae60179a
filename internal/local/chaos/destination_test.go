package chaos

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/sink"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestCheckDestination(t *testing.T) {
	const a, b, c webhook.Key = "stripe#evt_a", "stripe#evt_b", "shopify#c"
	ok := func(key webhook.Key, attempt, status int) sink.Delivery {
		return sink.Delivery{ID: destination.WebhookID(key, "forward"), Body: destination.Body{Key: string(key)}, Attempt: attempt, Status: status}
	}
	snap := Snapshot{Status: map[webhook.Key]inbox.Status{a: inbox.Done, b: inbox.Done, c: inbox.Dead}}
	for _, tc := range []struct {
		name  string
		got   []sink.Delivery
		want  DestinationReport
		diffs []string
	}{
		{"each DONE event once", []sink.Delivery{ok(a, 1, 200), ok(b, 1, 204)}, DestinationReport{2, 2, 0, 0}, nil},
		{"retried and redelivered under the same id", []sink.Delivery{ok(a, 1, 503), ok(a, 2, 200), ok(b, 1, 200), ok(b, 2, 200), ok(c, 1, 200)},
			DestinationReport{5, 3, 2, 0}, nil},
		{"one never delivered", []sink.Delivery{ok(a, 1, 200), ok(b, 1, 503)}, DestinationReport{2, 1, 0, 0},
			[]string{"destination forward: stripe#evt_b ended DONE but was never delivered"}},
		{"another id on a redelivery", []sink.Delivery{ok(a, 1, 200), ok(b, 1, 200), {ID: "msg_other", Body: destination.Body{Key: string(a)}, Attempt: 1, Status: 200}},
			DestinationReport{3, 2, 0, 0},
			[]string{"destination forward: stripe#evt_a delivered with webhook-id msg_other, not its stable one (" + destination.WebhookID(a, "forward") + ")"}},
		{"another destination's, taken by the sink", []sink.Delivery{ok(a, 1, 200), ok(b, 1, 200),
			{ID: destination.WebhookID(a, "crm"), Body: destination.Body{Key: string(a)}, Attempt: 1, Status: 200}}, DestinationReport{3, 2, 0, 0}, nil},
		{"only another destination's", []sink.Delivery{ok(a, 1, 200),
			{ID: destination.WebhookID(b, "crm"), Body: destination.Body{Key: string(b)}, Attempt: 1, Status: 200}}, DestinationReport{2, 1, 0, 0},
			[]string{"destination forward: stripe#evt_b ended DONE but was never delivered"}},
		{"never accepted", []sink.Delivery{ok(a, 1, 200), ok(b, 1, 200), ok("stripe#evt_x", 1, 200)}, DestinationReport{3, 3, 0, 0},
			[]string{"destination forward: stripe#evt_x delivered but never accepted"}},
		{"refused", []sink.Delivery{ok(a, 1, 200), ok(b, 1, 200), {Status: 401, Err: errors.New("signature mismatch")}}, DestinationReport{3, 2, 0, 1},
			[]string{"destination forward: a delivery refused by the sink (401): signature mismatch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, diffs := CheckDestination(snap, "forward", []string{"crm"}, tc.got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.diffs, diffs); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}
