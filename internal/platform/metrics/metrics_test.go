package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

var at = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func record(t *testing.T, d metrics.Dims, ms ...metrics.Metric) emf.Line {
	t.Helper()
	var buf bytes.Buffer
	metrics.WithClock(metrics.New(&buf, "hookinbox/shop-prod"), func() time.Time { return at }).Emit(d, ms...)
	if !strings.HasSuffix(buf.String(), "\n") || strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("want one line, got %q", buf.String())
	}
	l, err := emf.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("%v in %s", err, buf.String())
	}
	return l
}

func TestEmitLines(t *testing.T) {
	tests := []struct {
		name   string
		dims   metrics.Dims
		ms     []metrics.Metric
		sets   [][]string
		units  map[string]metrics.Unit
		values map[string]float64
		dimmed map[string]string
	}{
		{
			name:   "no dimensions",
			ms:     []metrics.Metric{metrics.Counted(metrics.StuckClaims, 3), metrics.Counted(metrics.Reconciled, 2)},
			sets:   [][]string{{}},
			units:  map[string]metrics.Unit{metrics.StuckClaims: metrics.Count, metrics.Reconciled: metrics.Count},
			values: map[string]float64{metrics.StuckClaims: 3, metrics.Reconciled: 2},
			dimmed: map[string]string{},
		},
		{
			name:   "provider and event type",
			dims:   metrics.Dims{Provider: "stripe", EventType: "checkout.session.completed"},
			ms:     []metrics.Metric{metrics.Counted(metrics.Processed, 1), metrics.Secs(metrics.EndToEndAge, 1500*time.Millisecond)},
			sets:   [][]string{{}, {metrics.DimProvider, metrics.DimEventType}},
			units:  map[string]metrics.Unit{metrics.Processed: metrics.Count, metrics.EndToEndAge: metrics.Seconds},
			values: map[string]float64{metrics.Processed: 1, metrics.EndToEndAge: 1.5},
			dimmed: map[string]string{metrics.DimProvider: "stripe", metrics.DimEventType: "checkout.session.completed"},
		},
		{
			name:   "verification failure by reason",
			dims:   metrics.Dims{Provider: "stripe", Reason: "bad-signature"},
			ms:     []metrics.Metric{metrics.Counted(metrics.VerifyFailed, 1)},
			sets:   [][]string{{}, {metrics.DimReason}, {metrics.DimProvider, metrics.DimReason}},
			units:  map[string]metrics.Unit{metrics.VerifyFailed: metrics.Count},
			values: map[string]float64{metrics.VerifyFailed: 1},
			dimmed: map[string]string{metrics.DimProvider: "stripe", metrics.DimReason: "bad-signature"},
		},
		{
			name:   "reason alone",
			dims:   metrics.Dims{Reason: "unknown-provider"},
			ms:     []metrics.Metric{metrics.Counted(metrics.VerifyFailed, 1)},
			sets:   [][]string{{}, {metrics.DimReason}},
			units:  map[string]metrics.Unit{metrics.VerifyFailed: metrics.Count},
			values: map[string]float64{metrics.VerifyFailed: 1},
			dimmed: map[string]string{metrics.DimReason: "unknown-provider"},
		},
		{
			name:   "effect duration",
			dims:   metrics.Dims{Effect: "create-invoice"},
			ms:     []metrics.Metric{metrics.Millis(metrics.EffectDuration, 2500*time.Microsecond)},
			sets:   [][]string{{}, {metrics.DimEffect}},
			units:  map[string]metrics.Unit{metrics.EffectDuration: metrics.Milliseconds},
			values: map[string]float64{metrics.EffectDuration: 2.5},
			dimmed: map[string]string{metrics.DimEffect: "create-invoice"},
		},
		{
			name:   "values that need escaping, and a non-number left out",
			dims:   metrics.Dims{Provider: "stripe", EventType: "odd\"type\\\n\xff"},
			ms:     []metrics.Metric{metrics.Counted(metrics.Received, 1), {Name: metrics.EndToEndAge, Unit: metrics.Seconds, Value: math.NaN()}},
			sets:   [][]string{{}, {metrics.DimProvider, metrics.DimEventType}},
			units:  map[string]metrics.Unit{metrics.Received: metrics.Count},
			values: map[string]float64{metrics.Received: 1},
			dimmed: map[string]string{metrics.DimProvider: "stripe", metrics.DimEventType: "odd\"type\\\n\ufffd"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := record(t, tt.dims, tt.ms...)
			if l.Namespace != "hookinbox/shop-prod" || !l.Time.Equal(at) {
				t.Errorf("namespace %q time %v", l.Namespace, l.Time)
			}
			if diff := cmp.Diff(tt.sets, l.Dimensions); diff != "" {
				t.Errorf("dimension sets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.units, l.Units); diff != "" {
				t.Errorf("units (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.values, l.Values); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.dimmed, l.Dims); diff != "" {
				t.Errorf("dimensions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEmitCutsLongDimensionValues(t *testing.T) {
	l := record(t, metrics.Dims{Provider: "stripe", EventType: strings.Repeat("é", 100)}, metrics.Counted(metrics.Received, 1))
	if got := len(l.Dims[metrics.DimEventType]); got > metrics.MaxDimLen || got < metrics.MaxDimLen-1 {
		t.Errorf("event type cut to %d bytes, want about %d", got, metrics.MaxDimLen)
	}
}

func TestNilRecorderAndNoMetricsWriteNothing(t *testing.T) {
	var r *metrics.Recorder
	r.Emit(metrics.Dims{}, metrics.Counted(metrics.Received, 1))
	var buf bytes.Buffer
	metrics.New(&buf, "ns").Emit(metrics.Dims{Provider: "stripe"})
	metrics.New(&buf, "ns").Emit(metrics.Dims{}, metrics.Metric{Name: metrics.Received, Unit: metrics.Count, Value: math.Inf(1)})
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}

func TestEveryNameHasItsUnit(t *testing.T) {
	for name, unit := range metrics.Names {
		if unit != metrics.Count && unit != metrics.Milliseconds && unit != metrics.Seconds {
			t.Errorf("%s: unit %q", name, unit)
		}
	}
}

func TestParseRefusesWhatCloudWatchWould(t *testing.T) {
	tests := map[string]string{
		"not JSON":          `metric Received 1`,
		"no directive":      `{"_aws":{"Timestamp":1}}`,
		"metric not member": `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[[]],"Metrics":[{"Name":"Received","Unit":"Count"}]}]}}`,
		"metric a string":   `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[[]],"Metrics":[{"Name":"Received","Unit":"Count"}]}]},"Received":"1"}`,
		"dimension missing": `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Provider"]],"Metrics":[{"Name":"Received","Unit":"Count"}]}]},"Received":1}`,
		"no namespace":      `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Dimensions":[[]],"Metrics":[]}]}}`,
	}
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := emf.Parse([]byte(line)); err == nil {
				t.Errorf("parsed %s", line)
			}
		})
	}
	if _, err := emf.Parse([]byte(`{"level":"INFO","msg":"hi"}`)); !errors.Is(err, emf.ErrNotEMF) {
		t.Errorf("plain log line: %v, want ErrNotEMF", err)
	}
}

func BenchmarkEmit(b *testing.B) {
	r := metrics.New(io.Discard, "hookinbox/shop-prod")
	d := metrics.Dims{Provider: "stripe", EventType: "checkout.session.completed"}
	b.ReportAllocs()
	for b.Loop() {
		r.Emit(d, metrics.Counted(metrics.Received, 1), metrics.Counted(metrics.Enqueued, 1))
	}
}

// TestBatchWritesOneLinePerDimensions: metrics recorded with a batch's
// context wait for Flush, which writes one line per set of dimensions
// (same names added up), the fields on the first; without a batch they
// are written at once; an empty batch writes nothing.
func TestBatchWritesOneLinePerDimensions(t *testing.T) {
	var buf bytes.Buffer
	r := metrics.New(&buf, "hookinbox/test")
	ctx, batch := metrics.WithBatch(context.Background())
	d := metrics.Dims{Provider: "stripe", EventType: "customer.created"}
	r.EmitContext(ctx, d, metrics.Counted(metrics.Received, 1))
	r.EmitContext(ctx, metrics.Dims{Provider: "stripe"}, metrics.Counted(metrics.IntakeErrors, 1))
	r.EmitContext(ctx, d, metrics.Counted(metrics.Enqueued, 1), metrics.Counted(metrics.Received, 1))
	if buf.Len() != 0 {
		t.Fatalf("written before Flush: %s", buf.String())
	}
	r.Flush(batch, metrics.String("msg", "webhook accepted"), metrics.Bool("livemode", true))
	lines, err := emf.ReadLines(bytes.NewReader(buf.Bytes()))
	if err != nil || len(lines) != 2 {
		t.Fatalf("%d lines (%v), want 2:\n%s", len(lines), err, buf.String())
	}
	if lines[0].Values[metrics.Received] != 2 || lines[0].Values[metrics.Enqueued] != 1 || lines[0].Dims[metrics.DimEventType] != "customer.created" {
		t.Errorf("first line %v %v, want Received 2, Enqueued 1 by event type", lines[0].Values, lines[0].Dims)
	}
	if lines[1].Values[metrics.IntakeErrors] != 1 || len(lines[1].Values) != 1 {
		t.Errorf("second line %v, want IntakeErrors 1", lines[1].Values)
	}
	first, second, _ := strings.Cut(buf.String(), "\n")
	var got1, got2 map[string]any
	if err := json.Unmarshal([]byte(first), &got1); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(second), &got2); err != nil {
		t.Fatal(err)
	}
	if got1["msg"] != "webhook accepted" || got1["livemode"] != true || got2["msg"] != nil || got2["livemode"] != nil {
		t.Errorf("fields not on the first line only:\n%s", buf.String())
	}
	buf.Reset()
	r.Flush(batch, metrics.String("msg", "again"))
	r.EmitContext(context.Background(), d, metrics.Counted(metrics.Received, 1))
	if lines, _ := emf.ReadLines(bytes.NewReader(buf.Bytes())); len(lines) != 1 || strings.Contains(buf.String(), "again") {
		t.Errorf("an emptied batch and a context without one wrote:\n%s", buf.String())
	}
}

// TestWithEventTypesBoundsTheDimension: a recorder told which types to name
// writes every other type as OtherEventType, through Emit and through a
// batch, so a type chosen by a sender mints no metric.
func TestWithEventTypesBoundsTheDimension(t *testing.T) {
	var buf bytes.Buffer
	known := func(provider, typ string) bool { return provider == "stripe" && typ == "checkout.session.completed" }
	r := metrics.WithClock(metrics.New(&buf, "hookinbox/shop-prod"), func() time.Time { return at }).WithEventTypes(known)
	r.Emit(metrics.Dims{Provider: "stripe", EventType: "checkout.session.completed"}, metrics.Counted(metrics.Processed, 1))
	r.Emit(metrics.Dims{Provider: "github", EventType: "made-up-1"}, metrics.Counted(metrics.Ignored, 1))
	ctx, b := metrics.WithBatch(context.Background())
	r.EmitContext(ctx, metrics.Dims{Provider: "github", EventType: "made-up-2"}, metrics.Counted(metrics.Received, 1))
	r.EmitContext(ctx, metrics.Dims{Provider: "github", EventType: "made-up-3"}, metrics.Counted(metrics.Received, 1))
	r.Emit(metrics.Dims{Provider: "github"}, metrics.Counted(metrics.Busy, 1)) // no type: no EventType dimension
	r.Flush(b)
	var got []string
	for _, line := range strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		l, err := emf.Parse([]byte(line))
		if err != nil {
			t.Fatalf("%v in %s", err, line)
		}
		got = append(got, l.Dims[metrics.DimProvider]+" "+l.Dims[metrics.DimEventType])
	}
	want := []string{"stripe checkout.session.completed", "github other", "github ", "github other"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("provider and event type of each line (-want +got):\n%s", diff)
	}
}
