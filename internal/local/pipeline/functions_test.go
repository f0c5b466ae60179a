package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		expr    string
		want    time.Duration
		wantErr bool
	}{
		{"rate(1 minute)", time.Minute, false},
		{"rate(5 minutes)", 5 * time.Minute, false},
		{"rate(2 hours)", 2 * time.Hour, false},
		{"rate(1 day)", 24 * time.Hour, false},
		{"rate(1 minutes)", 0, true},
		{"rate(5 minute)", 0, true},
		{"rate(0 minutes)", 0, true},
		{"rate(5 seconds)", 0, true},
		{"cron(0 12 * * ? *)", 0, true},
		{"every 5 minutes", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := parseRate(tt.expr)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseRate(%q) = %v, %v; want %v, error %v", tt.expr, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// fakeStack is a stack of tpl as CreateStack would name it, without
// emulators.
func fakeStack(tpl *samtemplate.Template) *Stack {
	st := &devstack.Stack{Name: "hookinbox", Template: tpl, Tables: map[string]string{}, Queues: map[string]devstack.Queue{}, Buckets: map[string]string{}}
	for _, id := range tpl.ByType("AWS::S3::Bucket") {
		st.Buckets[id] = "hookinbox-" + strings.ToLower(id)
	}
	for _, id := range tpl.ByType("AWS::DynamoDB::Table") {
		st.Tables[id] = "hookinbox-" + id
	}
	for _, id := range tpl.ByType("AWS::SQS::Queue") {
		st.Queues[id] = devstack.Queue{
			Name: "hookinbox-" + id,
			URL:  "http://127.0.0.1:1/123456789012/hookinbox-" + id,
			ARN:  "arn:aws:sqs:us-east-1:123456789012:hookinbox-" + id,
		}
	}
	return &Stack{Stack: st}
}

func TestFunctionsOfTheTemplate(t *testing.T) {
	tpl, err := devstack.RootTemplate()
	if err != nil {
		t.Fatal(err)
	}
	specs, err := fakeStack(tpl).Functions()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Function{}
	for _, s := range specs {
		byID[s.LogicalID] = s
	}
	included, err := fakeStack(tpl).Included(samtemplate.FunctionType)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(specs), len(included); got != want || want < len(tpl.ByType(samtemplate.FunctionType))-1 {
		t.Errorf("%d functions, want every one of the template's %d whose Condition holds (all but the EventBridge one, by default)", got, want)
	}
	recv := byID["ReceiverFunction"]
	if diff := cmp.Diff([]string{"GET /webhooks/gopay", "POST /webhooks/mollie", "POST /webhooks/{provider}"}, triggerStrings(recv.Triggers)); diff != "" {
		t.Errorf("ReceiverFunction triggers (-want +got):\n%s", diff)
	}
	if recv.Env["INBOX_TABLE"] != "hookinbox-InboxTable" || recv.Timeout != 10 {
		t.Errorf("ReceiverFunction env %v timeout %d", recv.Env, recv.Timeout)
	}
	proc := byID["ProcessorFunction"]
	if len(proc.Triggers) != 1 {
		t.Fatalf("ProcessorFunction triggers = %v, want one SQS source", proc.Triggers)
	}
	src := proc.Triggers[0]
	if src.Kind != TriggerSQS || src.Queue.Name != "hookinbox-EventsQueue" || src.BatchSize != 10 || src.Window != time.Second {
		t.Errorf("ProcessorFunction SQS source = %+v; want EventsQueue, batch 10, window 1s as in template.yaml", src)
	}
}

func TestFunctionsOfEveryEventKind(t *testing.T) {
	tpl, err := samtemplate.Parse([]byte(`
Transform: AWS::Serverless-2016-10-31
Resources:
  Q:
    Type: AWS::SQS::Queue
  Api:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Catchall: {Type: HttpApi}
        Get: {Type: HttpApi, Properties: {Path: "/items/{id}", Method: get}}
        Rest: {Type: Api, Properties: {Path: /x, Method: post}}
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Off: {Type: SQS, Properties: {Queue: !GetAtt Q.Arn, Enabled: false}}
        On: {Type: SQS, Properties: {Queue: !GetAtt Q.Arn, BatchSize: "25", MaximumBatchingWindowInSeconds: 5}}
  Cron:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Often: {Type: Schedule, Properties: {Schedule: rate(5 minutes)}}
        V2: {Type: ScheduleV2, Properties: {ScheduleExpression: rate(1 hour)}}
        Nightly: {Type: Schedule, Properties: {Schedule: "cron(0 3 * * ? *)"}}
        Disabled: {Type: Schedule, Properties: {Schedule: rate(1 day), Enabled: false}}
  Lonely:
    Type: AWS::Serverless::Function
`))
	if err != nil {
		t.Fatal(err)
	}
	specs, err := fakeStack(tpl).Functions()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	skipped := map[string]int{}
	for _, s := range specs {
		got[s.LogicalID] = triggerStrings(s.Triggers)
		skipped[s.LogicalID] = len(s.Skipped)
	}
	want := map[string][]string{
		"Api":    {"ANY /{proxy+}", "GET /items/{id}"},
		"Cron":   {"rate(5 minutes)", "rate(1 hour)"},
		"Lonely": nil,
		"Worker": {"SQS hookinbox-Q (batch 25, window 5s)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"Api": 1, "Cron": 2, "Lonely": 0, "Worker": 1}, skipped); diff != "" {
		t.Errorf("skipped events (-want +got):\n%s", diff)
	}
}

func triggerStrings(ts []Trigger) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}
