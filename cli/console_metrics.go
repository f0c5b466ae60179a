package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/hookinbox/hookinbox/internal/console"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

// Health implements the console's stack with status's report of the
// last hour, and on AWS the stack's alarms in ALARM.
func (c *consoleStack) Health(ctx context.Context) (console.Health, error) {
	r := collectStatus(ctx, c.read, c.providers, time.Hour, 15*time.Minute, false)
	h := healthOf(r)
	h.Alarms, h.AlarmsUnavailable = c.alarms(ctx)
	return h, nil
}

// healthOf is the console's view of a status report.
func healthOf(r *statusReport) console.Health {
	depth := func(q queueStatus) console.QueueDepth {
		d := console.QueueDepth{Name: q.Name, Visible: q.Visible, InFlight: q.InFlight, Delayed: q.Delayed}
		if q.OldestAgeSeconds != nil {
			d.OldestAge = ago(*q.OldestAgeSeconds)
		}
		return d
	}
	h := console.Health{Source: r.Source, Stack: r.Stack, At: r.At, EventsQueue: depth(r.EventsQueue), DLQ: depth(r.DLQ),
		StuckAfter: r.StuckAfter, StuckClaims: r.StuckClaims, OverdueLeases: r.OverdueLeases,
		Window: "hour", CountsFrom: r.CountsFrom, Problems: r.Problems}
	if o := r.OldestUnfinished; o != nil {
		h.OldestUnfinished = fmt.Sprintf("%s (%s), last message %s ago", o.Key, o.Status, ago(o.AgeSeconds))
	}
	for _, cp := range r.Reconciler {
		line := cp.Provider + ": checkpoint " + orDefault(cp.Checkpoint, "none yet")
		if cp.Checkpoint != "" {
			line += " (" + ago(cp.LagSeconds) + " behind)"
		}
		if cp.Blocked != "" {
			line += fmt.Sprintf(", held back by %s (%d tries)", cp.Blocked, cp.Tries)
		}
		h.Reconciler = append(h.Reconciler, line)
	}
	for _, n := range countNames() {
		if v, ok := r.Counts[n]; ok {
			h.Counts = append(h.Counts, console.Count{Name: n, Value: v})
		}
	}
	return h
}

// alarms returns the names of the stack's alarms in ALARM, or why it
// cannot: a local stack has none.
func (c *consoleStack) alarms(ctx context.Context) ([]string, string) {
	switch {
	case c.read.local != nil:
		return nil, "The local stack has no alarms."
	case c.read.stack == "":
		return nil, "Pass --stack NAME to see the stack's alarms."
	}
	p := cloudwatch.NewDescribeAlarmsPaginator(cloudwatch.NewFromConfig(c.read.cfg), &cloudwatch.DescribeAlarmsInput{
		AlarmNamePrefix: aws.String(c.read.stack + "-"), StateValue: cwtypes.StateValueAlarm,
	})
	var names []string
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, "Could not read the alarms (cloudwatch:DescribeAlarms): " + err.Error()
		}
		for _, a := range page.MetricAlarms {
			names = append(names, aws.ToString(a.AlarmName))
		}
		for _, a := range page.CompositeAlarms {
			names = append(names, aws.ToString(a.AlarmName))
		}
	}
	return names, ""
}

// Metrics implements the console's stack: on the local stack from its
// metric lines, on AWS from CloudWatch (namespace hookinbox/<stack>).
func (c *consoleStack) Metrics(ctx context.Context, span console.Span, qs []console.MetricQuery) ([][]float64, error) {
	if st := c.read.local; st != nil {
		lines, err := metricLines(st.MetricsFile)
		return lineMetrics(lines, span, qs), err
	}
	if c.read.stack == "" {
		return lineMetrics(nil, span, qs), nil // the namespace is the stack's
	}
	return cloudWatchMetrics(ctx, cloudwatch.NewFromConfig(c.read.cfg), "hookinbox/"+c.read.stack, span, qs)
}

// lineMetrics computes each query per bucket of span from metric lines,
// as CloudWatch would from them.
func lineMetrics(lines []emf.Line, span console.Span, qs []console.MetricQuery) [][]float64 {
	out := make([][]float64, len(qs))
	for i, q := range qs {
		samples := make([][]float64, span.Buckets)
		for _, l := range lines {
			v, ok := l.Values[q.Name]
			b := int(l.Time.Sub(span.From) / span.Step)
			if !ok || l.Time.Before(span.From) || b >= span.Buckets || !hasDims(l, q.Dims) {
				continue
			}
			samples[b] = append(samples[b], v)
		}
		out[i] = make([]float64, span.Buckets)
		for b, vs := range samples {
			out[i][b] = statOf(q.Stat, vs)
		}
	}
	return out
}

// hasDims reports whether the line has each dimension of want.
func hasDims(l emf.Line, want map[string]string) bool {
	for k, v := range want {
		if l.Dims[k] != v {
			return false
		}
	}
	return true
}

// statOf is a CloudWatch statistic of values: Sum (the default),
// Average, Maximum or p99.
func statOf(stat string, vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	var sum float64
	for _, v := range vs {
		sum += v
	}
	switch stat {
	case "Average":
		return sum / float64(len(vs))
	case "Maximum":
		return slices.Max(vs)
	case "p99":
		s := slices.Sorted(slices.Values(vs))
		return s[int(math.Ceil(0.99*float64(len(s))))-1]
	}
	return sum
}

// cloudWatchMetrics reads each query per bucket of span with
// GetMetricData. A value is added to the bucket of its timestamp (the
// first without one), the nearest bucket when it falls outside.
func cloudWatchMetrics(ctx context.Context, cw metricData, namespace string, span console.Span, qs []console.MetricQuery) ([][]float64, error) {
	in := &cloudwatch.GetMetricDataInput{StartTime: aws.Time(span.From), EndTime: aws.Time(span.From.Add(time.Duration(span.Buckets) * span.Step))}
	out := make([][]float64, len(qs))
	for i, q := range qs {
		out[i] = make([]float64, span.Buckets)
		m := &cwtypes.Metric{Namespace: aws.String(namespace), MetricName: aws.String(q.Name)}
		for k, v := range q.Dims {
			m.Dimensions = append(m.Dimensions, cwtypes.Dimension{Name: aws.String(k), Value: aws.String(v)})
		}
		in.MetricDataQueries = append(in.MetricDataQueries, cwtypes.MetricDataQuery{Id: aws.String("m" + strconv.Itoa(i)),
			MetricStat: &cwtypes.MetricStat{Metric: m, Period: aws.Int32(int32(span.Step / time.Second)), Stat: aws.String(orDefault(q.Stat, "Sum"))}})
	}
	p := cloudwatch.NewGetMetricDataPaginator(cw, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("CloudWatch GetMetricData: %w", err)
		}
		for _, res := range page.MetricDataResults {
			i, err := strconv.Atoi(strings.TrimPrefix(aws.ToString(res.Id), "m"))
			if err != nil || i < 0 || i >= len(out) {
				continue
			}
			for j, v := range res.Values {
				b := 0
				if j < len(res.Timestamps) {
					b = min(max(int(res.Timestamps[j].Sub(span.From)/span.Step), 0), span.Buckets-1)
				}
				out[i][b] += v
			}
		}
	}
	return out, nil
}

// Destinations implements the console's stack: the local stack's
// processor's DESTINATIONS and those its metric lines name; on AWS those
// with metrics in CloudWatch.
func (c *consoleStack) Destinations(ctx context.Context) ([]string, error) {
	var names []string
	if st := c.read.local; st != nil {
		cfgs, err := destination.Parse(st.functionEnv("ProcessorFunction", "DESTINATIONS"), true)
		for _, d := range cfgs {
			names = append(names, d.Name)
		}
		lines, lerr := metricLines(st.MetricsFile)
		for _, l := range lines {
			if n := l.Dims[metrics.DimDestination]; n != "" {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		return slices.Compact(names), errors.Join(err, lerr)
	}
	if c.read.stack == "" {
		return nil, nil
	}
	p := cloudwatch.NewListMetricsPaginator(cloudwatch.NewFromConfig(c.read.cfg), &cloudwatch.ListMetricsInput{
		Namespace: aws.String("hookinbox/" + c.read.stack), Dimensions: []cwtypes.DimensionFilter{{Name: aws.String(metrics.DimDestination)}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return names, fmt.Errorf("CloudWatch ListMetrics: %w", err)
		}
		for _, m := range page.Metrics {
			for _, d := range m.Dimensions {
				if aws.ToString(d.Name) == metrics.DimDestination {
					names = append(names, aws.ToString(d.Value))
				}
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
