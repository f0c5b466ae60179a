package console

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

const (
	// chartStep and chartBuckets are the Health page's charts: the last
	// six hours, by quarter of an hour.
	chartStep    = 15 * time.Minute
	chartBuckets = 24
	// chartWidth and chartHeight are a chart's drawing, in SVG units.
	chartWidth, chartHeight = 240.0, 48.0
)

// chartMetrics are the counts the Health page charts.
func chartMetrics() []string {
	return []string{metrics.Received, metrics.Processed, metrics.Failed, metrics.Parked}
}

// chart is one metric's bars over the last hours, drawn as SVG.
type chart struct {
	Name       string
	Total, Max float64
	Bars       []bar
	From, To   time.Time
}

// bar is one bucket's rectangle and what it says.
type bar struct {
	X, Y, W, H float64
	Title      string
}

// chartOf draws the values of one metric, a bucket each, from span.
func chartOf(name string, span Span, values []float64) chart {
	c := chart{Name: name, From: span.From, To: span.From.Add(time.Duration(span.Buckets) * span.Step)}
	for _, v := range values {
		c.Total += v
		c.Max = max(c.Max, v)
	}
	w := chartWidth / float64(span.Buckets)
	for i := 0; i < span.Buckets && i < len(values); i++ {
		h := 0.0
		if c.Max > 0 {
			h = values[i] / c.Max * (chartHeight - 2)
		}
		at := span.From.Add(time.Duration(i) * span.Step)
		c.Bars = append(c.Bars, bar{X: float64(i) * w, Y: chartHeight - h, W: w - 1, H: h,
			Title: fmt.Sprintf("%s: %g from %s", name, values[i], at.Local().Format("15:04"))})
	}
	return c
}

// healthView is the Health page.
type healthView struct {
	Health
	Charts []chart
}

// healthPage shows what `hookinbox status` shows, and charts of the
// last six hours.
func (s *Server) healthPage(w http.ResponseWriter, r *http.Request) {
	h, err := s.stack.Health(r.Context())
	if err != nil {
		h.Problems = append(h.Problems, err.Error())
	}
	v := healthView{Health: h}
	span := Span{From: s.now().Truncate(chartStep).Add(-(chartBuckets - 1) * chartStep), Step: chartStep, Buckets: chartBuckets}
	var qs []MetricQuery
	for _, n := range chartMetrics() {
		qs = append(qs, MetricQuery{Name: n, Stat: "Sum"})
	}
	vals, err := s.stack.Metrics(r.Context(), span, qs)
	if err != nil {
		v.Problems = append(v.Problems, "charts: "+err.Error())
	}
	for i, n := range chartMetrics() {
		if i < len(vals) {
			v.Charts = append(v.Charts, chartOf(n, span, vals[i]))
		}
	}
	s.render(w, r, http.StatusOK, "health", page{Title: "Health", Nav: "health", Refresh: 30, Body: v})
}
