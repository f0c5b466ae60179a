package metrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var at = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func record(t *testing.T, d Dims, ms ...Metric) Line {
	t.Helper()
	var buf bytes.Buffer
	New(&buf, "hookinbox/shop-prod").WithClock(func() time.Time { return at }).Emit(d, ms...)
	if !strings.HasSuffix(buf.String(), "\n") || strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("want one line, got %q", buf.String())
	}
	l, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("%v in %s", err, buf.String())
	}
	return l
}

func TestEmitLines(t *testing.T) {
	tests := []struct {
		name   string
		dims   Dims
		ms     []Metric
		sets   [][]string
		units  map[string]Unit
		values map[string]float64
		dimmed map[string]string
	}{
		{
			name:   "no dimensions",
			ms:     []Metric{Counted(StuckClaims, 3), Counted(Reconciled, 2)},
			sets:   [][]string{{}},
			units:  map[string]Unit{StuckClaims: Count, Reconciled: Count},
			values: map[string]float64{StuckClaims: 3, Reconciled: 2},
			dimmed: map[string]string{},
		},
		{
			name:   "provider and event type",
			dims:   Dims{Provider: "stripe", EventType: "checkout.session.completed"},
			ms:     []Metric{Counted(Processed, 1), Secs(EndToEndAge, 1500*time.Millisecond)},
			sets:   [][]string{{}, {DimProvider, DimEventType}},
			units:  map[string]Unit{Processed: Count, EndToEndAge: Seconds},
			values: map[string]float64{Processed: 1, EndToEndAge: 1.5},
			dimmed: map[string]string{DimProvider: "stripe", DimEventType: "checkout.session.completed"},
		},
		{
			name:   "verification failure by reason",
			dims:   Dims{Provider: "stripe", Reason: "bad-signature"},
			ms:     []Metric{Counted(VerifyFailed, 1)},
			sets:   [][]string{{}, {DimReason}, {DimProvider, DimReason}},
			units:  map[string]Unit{VerifyFailed: Count},
			values: map[string]float64{VerifyFailed: 1},
			dimmed: map[string]string{DimProvider: "stripe", DimReason: "bad-signature"},
		},
		{
			name:   "reason alone",
			dims:   Dims{Reason: "unknown-provider"},
			ms:     []Metric{Counted(VerifyFailed, 1)},
			sets:   [][]string{{}, {DimReason}},
			units:  map[string]Unit{VerifyFailed: Count},
			values: map[string]float64{VerifyFailed: 1},
			dimmed: map[string]string{DimReason: "unknown-provider"},
		},
		{
			name:   "effect duration",
			dims:   Dims{Effect: "create-invoice"},
			ms:     []Metric{Millis(EffectDuration, 2500*time.Microsecond)},
			sets:   [][]string{{}, {DimEffect}},
			units:  map[string]Unit{EffectDuration: Milliseconds},
			values: map[string]float64{EffectDuration: 2.5},
			dimmed: map[string]string{DimEffect: "create-invoice"},
		},
		{
			name:   "values that need escaping, and a non-number left out",
			dims:   Dims{Provider: "stripe", EventType: "odd\"type\\\n\xff"},
			ms:     []Metric{Counted(Received, 1), {Name: EndToEndAge, Unit: Seconds, Value: math.NaN()}},
			sets:   [][]string{{}, {DimProvider, DimEventType}},
			units:  map[string]Unit{Received: Count},
			values: map[string]float64{Received: 1},
			dimmed: map[string]string{DimProvider: "stripe", DimEventType: "odd\"type\\\n\ufffd"},
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
	l := record(t, Dims{Provider: "stripe", EventType: strings.Repeat("é", 100)}, Counted(Received, 1))
	if got := len(l.Dims[DimEventType]); got > MaxDimLen || got < MaxDimLen-1 {
		t.Errorf("event type cut to %d bytes, want about %d", got, MaxDimLen)
	}
}

func TestNilRecorderAndNoMetricsWriteNothing(t *testing.T) {
	var r *Recorder
	r.Emit(Dims{}, Counted(Received, 1))
	var buf bytes.Buffer
	New(&buf, "ns").Emit(Dims{Provider: "stripe"})
	New(&buf, "ns").Emit(Dims{}, Metric{Name: Received, Unit: Count, Value: math.Inf(1)})
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}

func TestEveryNameHasItsUnit(t *testing.T) {
	for name, unit := range Names {
		if unit != Count && unit != Milliseconds && unit != Seconds {
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
			if _, err := Parse([]byte(line)); err == nil {
				t.Errorf("parsed %s", line)
			}
		})
	}
	if _, err := Parse([]byte(`{"level":"INFO","msg":"hi"}`)); !errors.Is(err, ErrNotEMF) {
		t.Errorf("plain log line: %v, want ErrNotEMF", err)
	}
}

func TestEmitAllocatesNothing(t *testing.T) {
	r := New(io.Discard, "hookinbox/shop-prod")
	d := Dims{Provider: "stripe", EventType: "checkout.session.completed"}
	r.Emit(d, Counted(Received, 1), Counted(Enqueued, 1)) // grow the buffer once
	allocs := testing.AllocsPerRun(100, func() { r.Emit(d, Counted(Received, 1), Counted(Enqueued, 1)) })
	if allocs != 0 {
		t.Errorf("Emit allocates %.0f times per line, want 0", allocs)
	}
}

func BenchmarkEmit(b *testing.B) {
	r := New(io.Discard, "hookinbox/shop-prod")
	d := Dims{Provider: "stripe", EventType: "checkout.session.completed"}
	b.ReportAllocs()
	for b.Loop() {
		r.Emit(d, Counted(Received, 1), Counted(Enqueued, 1))
	}
}

// TestBatchWritesOneLinePerDimensions: metrics recorded with a batch's
// context wait for Flush, which writes one line per set of dimensions
// (same names added up), the fields on the first; without a batch they
// are written at once; an empty batch writes nothing.
func TestBatchWritesOneLinePerDimensions(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf, "hookinbox/test")
	ctx, batch := WithBatch(context.Background())
	d := Dims{Provider: "stripe", EventType: "customer.created"}
	r.EmitContext(ctx, d, Counted(Received, 1))
	r.EmitContext(ctx, Dims{Provider: "stripe"}, Counted(IntakeErrors, 1))
	r.EmitContext(ctx, d, Counted(Enqueued, 1), Counted(Received, 1))
	if buf.Len() != 0 {
		t.Fatalf("written before Flush: %s", buf.String())
	}
	r.Flush(batch, String("msg", "webhook accepted"), Bool("livemode", true))
	lines, err := ReadLines(bytes.NewReader(buf.Bytes()))
	if err != nil || len(lines) != 2 {
		t.Fatalf("%d lines (%v), want 2:\n%s", len(lines), err, buf.String())
	}
	if lines[0].Values[Received] != 2 || lines[0].Values[Enqueued] != 1 || lines[0].Dims[DimEventType] != "customer.created" {
		t.Errorf("first line %v %v, want Received 2, Enqueued 1 by event type", lines[0].Values, lines[0].Dims)
	}
	if lines[1].Values[IntakeErrors] != 1 || len(lines[1].Values) != 1 {
		t.Errorf("second line %v, want IntakeErrors 1", lines[1].Values)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	if !strings.Contains(first, `"msg":"webhook accepted","livemode":true}`) || strings.Count(buf.String(), `"msg"`) != 1 {
		t.Errorf("fields not on the first line only:\n%s", buf.String())
	}
	buf.Reset()
	r.Flush(batch, String("msg", "again"))
	r.EmitContext(context.Background(), d, Counted(Received, 1))
	if lines, _ := ReadLines(bytes.NewReader(buf.Bytes())); len(lines) != 1 || strings.Contains(buf.String(), "again") {
		t.Errorf("an emptied batch and a context without one wrote:\n%s", buf.String())
	}
}

// TestWithEventTypesBoundsTheDimension: a recorder told which types to name
// writes every other type as OtherEventType, through Emit and through a
// batch, so a type chosen by a sender mints no metric.
func TestWithEventTypesBoundsTheDimension(t *testing.T) {
	var buf bytes.Buffer
	known := func(provider, typ string) bool { return provider == "stripe" && typ == "checkout.session.completed" }
	r := New(&buf, "hookinbox/shop-prod").WithClock(func() time.Time { return at }).WithEventTypes(known)
	r.Emit(Dims{Provider: "stripe", EventType: "checkout.session.completed"}, Counted(Processed, 1))
	r.Emit(Dims{Provider: "github", EventType: "made-up-1"}, Counted(Ignored, 1))
	ctx, b := WithBatch(context.Background())
	r.EmitContext(ctx, Dims{Provider: "github", EventType: "made-up-2"}, Counted(Received, 1))
	r.EmitContext(ctx, Dims{Provider: "github", EventType: "made-up-3"}, Counted(Received, 1))
	r.Emit(Dims{Provider: "github"}, Counted(Busy, 1)) // no type: no EventType dimension
	r.Flush(b)
	var got []string
	for _, line := range strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		l, err := Parse([]byte(line))
		if err != nil {
			t.Fatalf("%v in %s", err, line)
		}
		got = append(got, l.Dims[DimProvider]+" "+l.Dims[DimEventType])
	}
	want := []string{"stripe checkout.session.completed", "github other", "github ", "github other"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("provider and event type of each line (-want +got):\n%s", diff)
	}
}
