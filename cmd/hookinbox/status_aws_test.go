package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestStatusOnAWS runs `hookinbox status --aws` as against a deployed
// stack found by name, with the endpoints given the AWS way
// (AWS_ENDPOINT_URL_*). The emulators have no CloudWatch that speaks the
// SDK's protocol (moto 5.2 lacks its CBOR), so CloudWatch is unreachable
// here: status says so and shows everything else.
func TestStatusOnAWS(t *testing.T) {
	emu, st := stackInEnv(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	t.Setenv("AWS_ENDPOINT_URL_CLOUDWATCH", "http://"+closed.Addr().String())
	ctx := context.Background()
	now := time.Now()

	// A claim stuck for 20 minutes, and a parked event.
	store := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	ev := webhook.Event{Provider: "stripe", ID: "evt_status", Type: "checkout.session.completed", Created: now.Add(-20 * time.Minute), Raw: []byte(`{}`)}
	if _, err := store.Claim(ctx, inbox.Claim{Event: ev, At: now.Add(-20 * time.Minute), TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	env := webhook.Envelope{Key: "stripe#evt_parked", Type: "invoice.paid"}
	if err := queue.New(emu.SQS(), st.Queues["EventsDLQ"].URL).Park(ctx, env.Marshal(), env, "no such customer", 5, now); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	noStack := filepath.Join(t.TempDir(), "none.json")
	if err := cmdStatus(ctx, []string{"--aws", "--stack", st.Name, "--json", "--state-file", noStack}, &out, &errOut); err != nil {
		t.Fatalf("status --aws: %v\n%s", err, errOut.String())
	}
	var r statusReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("--json printed more than JSON: %v\n%s", err, out.String())
	}
	if r.Source != "aws" || r.Stack != st.Name || r.DLQ.total() != 1 || r.StuckClaims != 1 || r.EventsQueue.Name != st.Name+"-events" {
		t.Errorf("report %+v", r)
	}
	if o := r.OldestUnfinished; o == nil || o.Key != "stripe#evt_status" || o.AgeSeconds < 19*60 {
		t.Errorf("oldest unfinished %+v, want stripe#evt_status 20 minutes old", o)
	}
	want := "hookinbox replay --all --dry-run --aws --stack " + st.Name
	if len(r.Replay) != 2 || r.Replay[0] != want {
		t.Errorf("replay commands %q, want %q first", r.Replay, want)
	}
	if len(r.Problems) != 2 || !strings.Contains(strings.Join(r.Problems, "\n"), closed.Addr().String()) {
		t.Errorf("problems %q, want the counts and the message age, from CloudWatch", r.Problems)
	}
}

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
