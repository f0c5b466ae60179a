package deploytest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

// watched is one metric an alarm or a dashboard widget reads.
type watched struct {
	Namespace, Name string
	Dims            map[string]string
}

func (w watched) String() string { return fmt.Sprintf("%s %s %v", w.Namespace, w.Name, w.Dims) }

// alarmMetrics returns what the resolved alarm properties p watch: its
// MetricName, or each MetricStat of its Metrics.
func alarmMetrics(p map[string]any) []watched {
	dims := func(v any) map[string]string {
		out := map[string]string{}
		list, _ := v.([]any)
		for _, d := range list {
			m, _ := d.(map[string]any)
			out[fmt.Sprint(m["Name"])] = fmt.Sprint(m["Value"])
		}
		return out
	}
	if name, ok := p["MetricName"].(string); ok {
		return []watched{{Namespace: fmt.Sprint(p["Namespace"]), Name: name, Dims: dims(p["Dimensions"])}}
	}
	var out []watched
	list, _ := p["Metrics"].([]any)
	for _, q := range list {
		m, _ := q.(map[string]any)
		stat, ok := m["MetricStat"].(map[string]any)
		if !ok {
			continue
		}
		metric, _ := stat["Metric"].(map[string]any)
		out = append(out, watched{Namespace: fmt.Sprint(metric["Namespace"]), Name: fmt.Sprint(metric["MetricName"]), Dims: dims(metric["Dimensions"])})
	}
	return out
}

// exists reports whether the resource id is created in the deployment c:
// it has no Condition, or its Condition holds.
func exists(t *testing.T, tpl *samtemplate.Template, c samtemplate.Context, id string) bool {
	t.Helper()
	cond := tpl.Resources[id].Condition
	if cond == "" {
		return true
	}
	on, err := tpl.Resolve(samtemplate.Fn{Name: "Condition", Args: cond}, c)
	if err != nil {
		t.Fatalf("%s Condition %s: %v", id, cond, err)
	}
	return on == true
}

// resolvedAlarms returns every alarm's resolved properties by logical ID.
func resolvedAlarms(t *testing.T, tpl *samtemplate.Template, c samtemplate.Context) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, id := range tpl.ByType("AWS::CloudWatch::Alarm") {
		v, err := tpl.Resolve(tpl.Resources[id].Properties, c)
		if err != nil {
			t.Fatalf("alarm %s: %v", id, err)
		}
		out[id], _ = v.(map[string]any)
	}
	return out
}

func TestTemplateAlarmsOnOneTopic(t *testing.T) {
	const inv = "every alarm notifies the one alarm topic, on metrics the functions publish, covering each failure the runbook names"
	tpl := loadProject(t)
	topics := tpl.ByType("AWS::SNS::Topic")
	if len(topics) != 1 || topics[0] != "AlarmTopic" {
		broken(t, inv, "SNS topics %v, want only AlarmTopic", topics)
	}
	for name, c := range deployments(t, tpl) {
		t.Run(name, func(t *testing.T) {
			ns := "hookinbox/" + c.StackName
			fn := func(id string) string { v, _ := c.Lookup(id, ""); return v }
			queue := func(id string) string { v, _ := c.Lookup(id, "QueueName"); return v }
			topic, _ := c.Lookup("AlarmTopic", "")
			alarms := resolvedAlarms(t, tpl, c)
			if len(alarms) < 6 {
				broken(t, inv, "%d alarms, want at least 6", len(alarms))
			}
			var all []watched
			for id, p := range alarms {
				for _, key := range []string{"AlarmActions", "OKActions"} {
					if diff := cmp.Diff(p[key], any([]any{topic})); diff != "" {
						broken(t, inv, "%s %s (-got +want):\n%s", id, key, diff)
					}
				}
				if d, _ := p["AlarmDescription"].(string); !strings.Contains(d, "docs/operations.md") {
					broken(t, inv, "%s's description names no runbook entry in docs/operations.md", id)
				}
				ms := alarmMetrics(p)
				if len(ms) == 0 {
					broken(t, inv, "%s watches no metric", id)
				}
				for _, m := range ms {
					if m.Namespace != ns {
						continue
					}
					if _, ok := metrics.Names[m.Name]; !ok {
						broken(t, inv, "%s watches %s, which no function publishes (internal/platform/metrics.Names)", id, m)
					}
					for k := range m.Dims {
						if k != metrics.DimReason {
							broken(t, inv, "%s watches %s by %s; functions publish every metric without dimensions, and by Reason alone", id, m, k)
						}
					}
				}
				all = append(all, ms...)
			}
			// What issue 12 asks the alarms to catch.
			for _, want := range []struct {
				what string
				m    watched
			}{
				{"a burst of signature mismatches", watched{ns, metrics.VerifyFailed, map[string]string{"Reason": "bad-signature"}}},
				{"webhooks refused as too large", watched{ns, metrics.VerifyFailed, map[string]string{"Reason": "too-large"}}},
				{"processor errors", watched{"AWS/Lambda", "Errors", map[string]string{"FunctionName": fn("ProcessorFunction")}}},
				{"events failing in the processor", watched{ns, metrics.Failed, map[string]string{}}},
				{"the age of the oldest queued event", watched{"AWS/SQS", "ApproximateAgeOfOldestMessage", map[string]string{"QueueName": queue("EventsQueue")}}},
				{"DLQ depth", watched{"AWS/SQS", "ApproximateNumberOfMessagesVisible", map[string]string{"QueueName": queue("EventsDLQ")}}},
				{"stuck claims", watched{ns, metrics.StuckClaims, map[string]string{}}},
				{"reconciler failures", watched{"AWS/Lambda", "Errors", map[string]string{"FunctionName": fn("ReconcilerFunction")}}},
				{"a stalled checkpoint", watched{ns, metrics.CheckpointLag, map[string]string{}}},
				{"missed events", watched{ns, metrics.Missed, map[string]string{}}},
				{"receiver 5xx answers", watched{ns, metrics.IntakeErrors, map[string]string{}}},
				{"events of the other mode", watched{ns, metrics.OtherMode, map[string]string{}}},
			} {
				if !slices.ContainsFunc(all, func(m watched) bool { return cmp.Equal(m, want.m) }) {
					broken(t, inv, "no alarm on %s (%s)", want.what, want.m)
				}
			}
		})
	}
}

func TestTemplateVerifyFailureAlarmFiresWithinMinutes(t *testing.T) {
	const inv = "a wrong or rotated-away secret alarms within 5 minutes of the first refused delivery"
	tpl := loadProject(t)
	p := resolvedAlarms(t, tpl, deployments(t, tpl)["defaults"])["VerifyFailuresAlarm"]
	if p == nil {
		broken(t, inv, "no VerifyFailuresAlarm")
		return
	}
	list, _ := p["Metrics"].([]any)
	for _, q := range list {
		m, _ := q.(map[string]any)
		if stat, ok := m["MetricStat"].(map[string]any); ok && fmt.Sprint(stat["Period"]) != "300" {
			broken(t, inv, "period %v, want 300 s", stat["Period"])
		}
	}
	if fmt.Sprint(p["EvaluationPeriods"]) != "1" || fmt.Sprint(p["Threshold"]) != "1" || p["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" {
		broken(t, inv, "EvaluationPeriods %v Threshold %v %v, want 1 period, >= 1", p["EvaluationPeriods"], p["Threshold"], p["ComparisonOperator"])
	}
}

// dashboardMetrics returns every metric the dashboard's widgets graph, with
// CloudWatch's "." shorthand (same as the line before) expanded, and the
// SEARCH expressions.
func dashboardMetrics(t *testing.T, body string) ([]watched, []string, map[string]bool) {
	t.Helper()
	var d struct {
		Widgets []struct {
			Type       string
			Properties struct {
				Metrics [][]any
				Alarms  []string
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("DashboardBody is not JSON: %v", err)
	}
	var out []watched
	var searches []string
	alarms := map[string]bool{}
	for _, w := range d.Widgets {
		for _, a := range w.Properties.Alarms {
			alarms[a] = true
		}
		var prev []string
		for _, line := range w.Properties.Metrics {
			if len(line) == 1 {
				if m, ok := line[0].(map[string]any); ok {
					searches = append(searches, fmt.Sprint(m["expression"]))
				}
				continue
			}
			var parts []string
			for _, v := range line {
				if s, ok := v.(string); ok {
					parts = append(parts, s)
				}
			}
			for i, p := range parts {
				if p == "." && i < len(prev) {
					parts[i] = prev[i]
				}
			}
			prev = parts
			m := watched{Namespace: parts[0], Name: parts[1], Dims: map[string]string{}}
			for i := 2; i+1 < len(parts); i += 2 {
				m.Dims[parts[i]] = parts[i+1]
			}
			out = append(out, m)
		}
	}
	return out, searches, alarms
}

func TestTemplateDashboard(t *testing.T) {
	const inv = "the dashboard graphs every alarmed metric, the queues, and every function's errors, duration and throttles"
	tpl := loadProject(t)
	ids := tpl.ByType("AWS::CloudWatch::Dashboard")
	if len(ids) != 1 {
		broken(t, inv, "%d dashboards, want 1", len(ids))
		return
	}
	for name, c := range deployments(t, tpl) {
		t.Run(name, func(t *testing.T) {
			body, err := tpl.ResolveString(tpl.Resources[ids[0]].Properties["DashboardBody"], c)
			if err != nil {
				broken(t, inv, "DashboardBody: %v", err)
				return
			}
			graphed, searches, alarmWidget := dashboardMetrics(t, body)
			has := func(m watched) bool {
				return slices.ContainsFunc(graphed, func(g watched) bool { return cmp.Equal(g, m) })
			}
			for id, p := range resolvedAlarms(t, tpl, c) {
				if !exists(t, tpl, c, id) {
					continue
				}
				for _, m := range alarmMetrics(p) {
					if len(m.Dims) == 1 && m.Dims[metrics.DimReason] != "" {
						continue // graphed by the SEARCH over Reason below
					}
					if !has(m) {
						broken(t, inv, "alarm %s watches %s, which the dashboard does not graph", id, m)
					}
				}
				arn, _ := c.Lookup(id, "Arn")
				if !alarmWidget[arn] {
					broken(t, inv, "alarm %s is not in the dashboard's alarm widget", id)
				}
			}
			for _, id := range tpl.ByType(samtemplate.FunctionType) {
				if !exists(t, tpl, c, id) {
					continue
				}
				fn, _ := c.Lookup(id, "")
				for _, metric := range []string{"Errors", "Duration", "Throttles"} {
					if m := (watched{"AWS/Lambda", metric, map[string]string{"FunctionName": fn}}); !has(m) {
						broken(t, inv, "no graph of %s", m)
					}
				}
			}
			for _, q := range []string{"EventsQueue", "EventsDLQ"} {
				qn, _ := c.Lookup(q, "QueueName")
				for _, metric := range []string{"ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage"} {
					if m := (watched{"AWS/SQS", metric, map[string]string{"QueueName": qn}}); !has(m) {
						broken(t, inv, "no graph of %s", m)
					}
				}
			}
			ns := "hookinbox/" + c.StackName
			for name := range metrics.Names {
				if !has(watched{ns, name, map[string]string{}}) && !slices.ContainsFunc(searches, func(s string) bool { return strings.Contains(s, `"`+name+`"`) }) {
					broken(t, inv, "metric %s is published but not on the dashboard", name)
				}
			}
			for _, s := range searches {
				if !strings.Contains(s, "{"+ns+",") {
					broken(t, inv, "SEARCH %s is not in the stack's namespace %s", s, ns)
				}
			}
		})
	}
}

func TestTemplateTracing(t *testing.T) {
	const inv = "every function traces actively unless TracingEnabled is false"
	tpl := loadProject(t)
	for _, tt := range []struct {
		param, want string
	}{{"", "Active"}, {"true", "Active"}, {"false", "PassThrough"}} {
		c := samtemplate.Context{}
		if tt.param != "" {
			c.Params = map[string]string{"TracingEnabled": tt.param}
		}
		for _, id := range tpl.ByType(samtemplate.FunctionType) {
			props, err := tpl.Function(id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.ResolveString(props["Tracing"], deployment(t, tpl, c))
			if err != nil || got != tt.want {
				broken(t, inv, "TracingEnabled=%q: %s Tracing %q (%v), want %s", tt.param, id, got, err, tt.want)
			}
		}
	}
}

// TestTemplateLogGroups: every function logs to its own log group, which
// keeps its lines LogRetentionDays (30 by default), never forever.
func TestTemplateLogGroups(t *testing.T) {
	const inv = "every function's log group is in the template, kept LogRetentionDays"
	tpl := loadProject(t)
	if d := tpl.Parameters["LogRetentionDays"].Default; d != "30" {
		broken(t, inv, "LogRetentionDays default %v, want 30", d)
	}
	for _, id := range tpl.ByType(samtemplate.FunctionType) {
		group := strings.TrimSuffix(id, "Function") + "LogGroup"
		r, ok := tpl.Resources[group]
		if !ok || r.Type != "AWS::Logs::LogGroup" {
			broken(t, inv, "%s has no log group %s", id, group)
			continue
		}
		if got := r.Properties["RetentionInDays"]; got != (samtemplate.Ref{Name: "LogRetentionDays"}) {
			broken(t, inv, "%s RetentionInDays = %#v, want !Ref LogRetentionDays", group, got)
		}
		if r.Condition != tpl.Resources[id].Condition {
			broken(t, inv, "%s has condition %q, its function %q", group, r.Condition, tpl.Resources[id].Condition)
		}
	}
}

func TestTemplateLogging(t *testing.T) {
	const inv = "functions log JSON at a level that never drops the metric lines, both parameters"
	tpl := loadProject(t)
	level := tpl.Parameters["LogLevel"]
	for _, v := range level.AllowedValues {
		if v == "WARN" || v == "ERROR" || v == "FATAL" {
			broken(t, inv, "LogLevel allows %s: Lambda would drop the level-less metric lines (treated as INFO)", v)
		}
	}
	for _, tt := range []struct {
		params map[string]string
		want   map[string]any
	}{
		{nil, map[string]any{"LogFormat": "JSON", "ApplicationLogLevel": "INFO", "SystemLogLevel": "WARN"}},
		{map[string]string{"LogLevel": "DEBUG"}, map[string]any{"LogFormat": "JSON", "ApplicationLogLevel": "DEBUG", "SystemLogLevel": "WARN"}},
		{map[string]string{"LogFormat": "Text"}, map[string]any{"LogFormat": "Text"}},
	} {
		c := deployment(t, tpl, samtemplate.Context{Params: tt.params})
		for _, id := range tpl.ByType(samtemplate.FunctionType) {
			props, _ := tpl.Function(id)
			got, err := tpl.Resolve(props["LoggingConfig"], c)
			if err != nil {
				broken(t, inv, "%s LoggingConfig: %v", id, err)
				continue
			}
			want := maps.Clone(tt.want)
			want["LogGroup"], _ = c.Lookup(strings.TrimSuffix(id, "Function")+"LogGroup", "")
			if diff := cmp.Diff(got, any(want)); diff != "" {
				broken(t, inv, "%v: %s LoggingConfig (-got +want):\n%s", tt.params, id, diff)
			}
		}
	}
}

func TestTemplateThrottling(t *testing.T) {
	const inv = "the webhook API is throttled, the receiver's concurrency reserved and the processor's bounded, all parameters"
	tpl := loadProject(t)
	for _, tt := range []struct {
		name                 string
		params               map[string]string
		rate, burst, reserve string // reserve "" means no ReservedConcurrentExecutions
		maxConcurrency       string
	}{
		{"defaults", nil, "100", "200", "20", "5"},
		{"set", map[string]string{"WebhookThrottleRate": "20", "WebhookThrottleBurst": "40", "ReceiverReservedConcurrency": "10", "ProcessorMaxConcurrency": "2"}, "20", "40", "10", "2"},
		{"no reservation", map[string]string{"ReceiverReservedConcurrency": "0"}, "100", "200", "", "5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := deployment(t, tpl, samtemplate.Context{Params: tt.params})
			api, err := tpl.Resolve(tpl.Resources["WebhookApi"].Properties["DefaultRouteSettings"], c)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := api.(map[string]any)
			if fmt.Sprint(m["ThrottlingRateLimit"]) != tt.rate || fmt.Sprint(m["ThrottlingBurstLimit"]) != tt.burst {
				broken(t, inv, "WebhookApi DefaultRouteSettings %v, want rate %s burst %s", m, tt.rate, tt.burst)
			}
			recv, _ := tpl.Function("ReceiverFunction")
			got, err := tpl.Resolve(recv["ReservedConcurrentExecutions"], c)
			if err != nil {
				t.Fatal(err)
			}
			if tt.reserve == "" && got != nil || tt.reserve != "" && fmt.Sprint(got) != tt.reserve {
				broken(t, inv, "ReceiverFunction ReservedConcurrentExecutions %v, want %q", got, tt.reserve)
			}
			proc, _ := tpl.Function("ProcessorFunction")
			events, err := tpl.Resolve(proc["Events"], c)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events.(map[string]any) {
				p, _ := e.(map[string]any)["Properties"].(map[string]any)
				sc, _ := p["ScalingConfig"].(map[string]any)
				if fmt.Sprint(sc["MaximumConcurrency"]) != tt.maxConcurrency {
					broken(t, inv, "processor event source MaximumConcurrency %v, want %s", sc["MaximumConcurrency"], tt.maxConcurrency)
				}
			}
		})
	}
	if p := tpl.Parameters["ProcessorMaxConcurrency"]; p.MaxValue == "" {
		broken(t, inv, "ProcessorMaxConcurrency has no MaxValue: a replay must not overrun the business's APIs")
	}
}
