package console

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/webhook"
)

const (
	// destinationWindow is the window of the Destinations page's counts.
	destinationWindow = 24 * time.Hour
	// logEvents is how many of the latest events the page reads the
	// delivery logs of, for the last answers and the events waiting.
	logEvents = 50
	// shownAnswers is how many last answers a destination shows.
	shownAnswers = 5
)

// destinationView is one destination on the Destinations page.
type destinationView struct {
	Name                             string
	Delivered, Retried, Parked, Gone float64
	LatencyAvg, LatencyP99           float64
	Answers                          []answer
	Waiting                          []webhook.Key
}

// answer is a destination's last answer to one event.
type answer struct {
	Key webhook.Key
	Log destination.Attempts
}

// destinationsView is the Destinations page.
type destinationsView struct {
	Window       string
	Events       int // events whose delivery logs were read
	Destinations []destinationView
	Problems     []string
}

// destinationQueries are the metrics of one destination the page shows,
// in destinationView's order.
func destinationQueries(name string) []MetricQuery {
	d := map[string]string{metrics.DimDestination: name}
	return []MetricQuery{
		{metrics.DestinationDelivered, "Sum", d}, {metrics.DestinationRetried, "Sum", d},
		{metrics.DestinationParked, "Sum", d}, {metrics.DestinationGone, "Sum", d},
		{metrics.DestinationLatency, "Average", d}, {metrics.DestinationLatency, "p99", d},
	}
}

// destinationsPage shows each destination's counts and latency over the
// last day, its last answers and the events waiting on it.
func (s *Server) destinationsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v := destinationsView{Window: "24h"}
	names, err := s.stack.Destinations(ctx)
	if err != nil {
		v.Problems = append(v.Problems, err.Error())
	}
	logs, err := s.deliveryLogs(ctx)
	if err != nil {
		v.Problems = append(v.Problems, err.Error())
	}
	v.Events = len(logs)
	byName := map[string]*destinationView{}
	for _, n := range names {
		byName[n] = &destinationView{Name: n}
	}
	for _, l := range logs {
		for _, a := range l.attempts {
			d := byName[a.Destination]
			if d == nil {
				d = &destinationView{Name: a.Destination}
				byName[a.Destination] = d
			}
			d.Answers = append(d.Answers, answer{l.item.Key, a})
			if !a.Delivered && (!l.item.Status.Final() || l.item.Status == inbox.Dead) {
				d.Waiting = append(d.Waiting, l.item.Key)
			}
		}
	}
	v.Destinations = s.destinationCounts(ctx, byName, &v.Problems)
	s.render(w, r, http.StatusOK, "destinations", page{Title: "Destinations", Nav: "destinations", Refresh: 30, Body: v})
}

// destinationCounts fills each destination's metrics, sorts its answers
// and returns them by name.
func (s *Server) destinationCounts(ctx context.Context, byName map[string]*destinationView, problems *[]string) []destinationView {
	var out []destinationView
	for _, d := range byName {
		slices.SortFunc(d.Answers, func(a, b answer) int { return b.Log.LastAt.Compare(a.Log.LastAt) })
		d.Answers = d.Answers[:min(len(d.Answers), shownAnswers)]
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b destinationView) int { return cmp.Compare(a.Name, b.Name) })
	var qs []MetricQuery
	for _, d := range out {
		qs = append(qs, destinationQueries(d.Name)...)
	}
	if len(qs) == 0 {
		return out
	}
	vals, err := s.stack.Metrics(ctx, Span{From: s.now().Add(-destinationWindow), Step: destinationWindow, Buckets: 1}, qs)
	if err != nil {
		*problems = append(*problems, "metrics: "+err.Error())
		return out
	}
	for i := range out {
		v := func(j int) float64 { return first(vals[i*6+j]) }
		d := &out[i]
		d.Delivered, d.Retried, d.Parked, d.Gone, d.LatencyAvg, d.LatencyP99 = v(0), v(1), v(2), v(3), v(4), v(5)
	}
	return out
}

// eventLog is one event and its delivery attempts.
type eventLog struct {
	item     inbox.Item
	attempts []destination.Attempts
}

// deliveryLogs reads the delivery logs of the latest events and the
// parked ones, a few at a time.
func (s *Server) deliveryLogs(ctx context.Context) ([]eventLog, error) {
	items, _, err := s.stack.Recent(ctx, inbox.RecentQuery{Unfinished: true, Finished: true, Limit: logEvents})
	if err != nil {
		return nil, err
	}
	items = mergeParked(items, s.parked(ctx).Messages, inbox.RecentQuery{})
	out := make([]eventLog, len(items))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, it := range items {
		g.Go(func() error {
			as, err := s.stack.DeliveryLog(gctx, it.Key)
			out[i] = eventLog{it, as}
			return err
		})
	}
	return out, g.Wait()
}

func first(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return vs[0]
}
