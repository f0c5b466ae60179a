package chaos

import (
	"fmt"
	"sort"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/sink"
	"github.com/hookinbox/hookinbox/webhook"
)

// DestinationReport is what a destination's sink received in one run.
type DestinationReport struct {
	Requests    int // requests the sink answered
	Events      int // distinct events delivered: verified and answered 2xx
	Redelivered int // verified deliveries that came after the event's first
	Refused     int // requests the sink refused: a bad signature, not a destination body
}

// CheckDestination compares what a sink received (got) with what a run
// left (snap). The sink is the destination name, which gets every event,
// and takes the deliveries of the destinations others too. Every delivery
// verified; every event that ended DONE delivered to name at least once;
// nothing delivered that the run did not claim; and every delivery under
// the stable webhook-id of its event and one of the destinations
// (destination.WebhookID). It returns what was received and each
// difference, sorted.
func CheckDestination(snap Snapshot, name string, others []string, got []sink.Delivery) (DestinationReport, []string) {
	r := DestinationReport{Requests: len(got)}
	var diffs []string
	ids := map[webhook.Key]map[string]bool{}
	delivered := map[webhook.Key]bool{}
	for _, d := range got {
		if d.Err != nil {
			r.Refused++
			diffs = append(diffs, fmt.Sprintf("destination %s: a delivery refused by the sink (%d): %v", name, d.Status, d.Err))
			continue
		}
		key := webhook.Key(d.Body.Key)
		if d.Redelivery() {
			r.Redelivered++
		}
		if ids[key] == nil {
			ids[key] = map[string]bool{}
		}
		ids[key][d.ID] = true
		if d.Status >= 200 && d.Status < 300 && d.ID == destination.WebhookID(key, name) {
			delivered[key] = true
		}
	}
	r.Events = len(delivered)
	for key, set := range ids {
		if _, claimed := snap.Status[key]; !claimed {
			diffs = append(diffs, fmt.Sprintf("destination %s: %s delivered but never accepted", name, key))
		}
		stable := map[string]bool{destination.WebhookID(key, name): true}
		for _, n := range others {
			stable[destination.WebhookID(key, n)] = true
		}
		for id := range set {
			if !stable[id] {
				diffs = append(diffs, fmt.Sprintf("destination %s: %s delivered with webhook-id %s, not its stable one (%s)", name, key, id, destination.WebhookID(key, name)))
			}
		}
	}
	for key, status := range snap.Status {
		if status == inbox.Done && !delivered[key] {
			diffs = append(diffs, fmt.Sprintf("destination %s: %s ended DONE but was never delivered", name, key))
		}
	}
	sort.Strings(diffs)
	return r, diffs
}

// String is the report's summary line.
func (r DestinationReport) String() string {
	return fmt.Sprintf("%d requests, %d events delivered, %d redeliveries, %d refused", r.Requests, r.Events, r.Redelivered, r.Refused)
}
