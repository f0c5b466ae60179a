package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

// fakeMetricData answers GetMetricData from values by metric name.
type fakeMetricData struct {
	values map[string][]float64
	inputs []*cloudwatch.GetMetricDataInput
}

func (f *fakeMetricData) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	f.inputs = append(f.inputs, in)
	out := &cloudwatch.GetMetricDataOutput{}
	for _, q := range in.MetricDataQueries {
		out.MetricDataResults = append(out.MetricDataResults, cwtypes.MetricDataResult{
			Id: q.Id, Values: f.values[aws.ToString(q.MetricStat.Metric.MetricName)],
		})
	}
	return out, nil
}

func TestCloudWatchCounts(t *testing.T) {
	f := &fakeMetricData{values: map[string][]float64{
		metrics.Received: {3, 2}, metrics.Processed: {4}, metrics.Missed: {1}, "ApproximateAgeOfOldestMessage": {42, 7},
	}}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	got, err := cloudWatchCounts(context.Background(), f, "hookinbox/shop-prod", now.Add(-time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{metrics.Received: 5, metrics.Processed: 4, metrics.Missed: 1, metrics.Parked: 0} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	if _, ok := got[metrics.StuckClaims]; ok {
		t.Errorf("counts include the per-run gauge StuckClaims: %v", got)
	}
	for _, q := range f.inputs[0].MetricDataQueries {
		m := q.MetricStat
		if aws.ToString(m.Metric.Namespace) != "hookinbox/shop-prod" || len(m.Metric.Dimensions) != 0 || aws.ToString(m.Stat) != "Sum" || aws.ToInt32(m.Period) != 3600 {
			t.Errorf("query %s: %s %v %s %d; want the namespace, no dimensions, Sum over the hour",
				aws.ToString(q.Id), aws.ToString(m.Metric.Namespace), m.Metric.Dimensions, aws.ToString(m.Stat), aws.ToInt32(m.Period))
		}
	}
	age, err := oldestMessageAge(context.Background(), f, "shop-prod-events", now)
	if err != nil || age == nil || *age != 42 {
		t.Errorf("oldest message age %v (%v), want the latest value, 42", age, err)
	}
}

// TestStatusPrintNamesWhatItRead: a report of resources named without a
// stack does not call itself the stack hookinbox, and counts agree with
// their noun.
func TestStatusPrintNamesWhatItRead(t *testing.T) {
	tests := []struct {
		name   string
		report statusReport
		want   []string
		not    []string
	}{
		{"resources", statusReport{Source: "aws", DLQ: queueStatus{Visible: 1}, Replay: []string{"hookinbox replay --all"}},
			[]string{"hookinbox status: AWS resources at", "The DLQ holds 1 event."}, []string{"AWS stack", "1 events"}},
		{"stack", statusReport{Source: "aws", Stack: "shop-prod", DLQ: queueStatus{Visible: 2}, Replay: []string{"hookinbox replay --all"}},
			[]string{"hookinbox status: AWS stack shop-prod at", "The DLQ holds 2 events."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			tt.report.print(&out)
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("no %q in:\n%s", w, out.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("%q in:\n%s", n, out.String())
				}
			}
		})
	}
}

func TestResolveResourcesWithoutStack(t *testing.T) {
	t.Setenv("AWS_REGION", "eu-west-1")
	tests := []struct {
		args      []string
		wantStack string
		wantWhere string
	}{
		{[]string{"--table", "t", "--queue-url", "https://sqs/q", "--dlq-url", "https://sqs/d"}, "", "AWS resources in eu-west-1"},
		{[]string{"--stack", "shop", "--table", "t", "--queue-url", "https://sqs/q", "--dlq-url", "https://sqs/d"}, "shop", "AWS stack shop in eu-west-1"},
	}
	for _, tt := range tests {
		fs := newFlagSet("status", "", "")
		sf := addStackFlags(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		target, err := sf.resolve(t.Context(), "status", &stderr, readsOnly, true)
		if err != nil {
			t.Fatal(err)
		}
		if target.stack != tt.wantStack || !strings.Contains(stderr.String(), tt.wantWhere) {
			t.Errorf("%v: stack %q, said %q; want %q, %q", tt.args, target.stack, stderr.String(), tt.wantStack, tt.wantWhere)
		}
	}
}
