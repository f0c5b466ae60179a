package deploytest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// The invariants of the recovery functions: dlq-replay, the reconciler and
// the stuck-claims alarm.

func TestTemplateDlqReplayPolicy(t *testing.T) {
	checkGrants(t, "DlqReplayFunction", "", func(c samtemplate.Context) []string {
		table, queue, dlq := arn(c, "InboxTable"), arn(c, "EventsQueue"), arn(c, "EventsDLQ")
		return []string{
			"dynamodb:GetItem on " + table,
			"dynamodb:Query on " + table,
			"dynamodb:UpdateItem on " + table,
			"s3:GetObject on " + bodies(c),
			"sqs:ChangeMessageVisibility on " + dlq,
			"sqs:DeleteMessage on " + dlq,
			"sqs:ReceiveMessage on " + dlq,
			"sqs:SendMessage on " + queue,
		}
	})
}

func TestTemplateReconcilerPolicy(t *testing.T) {
	checkGrants(t, "ReconcilerFunction", "StripeApiKeyArn", func(c samtemplate.Context) []string {
		table, queue := arn(c, "InboxTable"), arn(c, "EventsQueue")
		return []string{
			"dynamodb:DeleteItem on " + table,
			"dynamodb:GetItem on " + table,
			"dynamodb:PutItem on " + table,
			"dynamodb:Query on " + table,
			"dynamodb:Query on " + table + "/index/pending",
			"dynamodb:Query on " + table + "/index/retain",
			"dynamodb:UpdateItem on " + table,
			"s3:DeleteObject on " + bodies(c),
			"s3:PutObject on " + bodies(c),
			"secretsmanager:GetSecretValue on " + ref(c, "SubjectKeySecret"),
			"sqs:SendMessage on " + queue,
		}
	})
}

func TestTemplateRecoveryEnv(t *testing.T) {
	const inv = "the recovery functions name the table and queues the others use, and the replay outlasts nothing it hides"
	tpl := loadProject(t)
	c := deployments(t, tpl)["defaults"]
	tests := []struct {
		function string
		want     map[string]string
	}{
		{"DlqReplayFunction", defaultsEnv(map[string]string{
			"EVENTS_DLQ_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/hookinbox-events-dlq",
			"REPLAY_MAX":     "100",
			"BODY_BUCKET":    "hookinbox-bodybucket-abcdef012345",
		})},
		{"ReconcilerFunction", defaultsEnv(map[string]string{
			"STRIPE_API_KEY":             "",
			"STRIPE_API_URL":             "",
			"STRIPE_API_KEY_ARN":         "",
			"STUCK_AFTER":                "15m",
			"STRIPE_EVENTS_LOOKBACK":     "",
			"STRIPE_EVENT_TYPES":         "checkout.session.completed,checkout.session.async_payment_succeeded,customer.subscription.created,customer.subscription.updated,customer.subscription.deleted",
			"GITHUB_RECONCILE_HOOKS":     "",
			"GITHUB_TOKEN":               "",
			"GITHUB_TOKEN_ARN":           "",
			"GITHUB_API_URL":             "https://api.github.com",
			"GITHUB_RECONCILE_LOOKBACK":  "1h",
			"SHOPIFY_RECONCILE_LOOKBACK": "1h",
			"GOPAY_API_URL":              "https://gate.gopay.cz/api",
			"GOPAY_CLIENT_ID":            "",
			"GOPAY_CLIENT_SECRET":        "",
			"GOPAY_CLIENT_SECRET_ARN":    "",
			"SHOPIFY_SHOP_DOMAIN":        "",
			"SHOPIFY_ADMIN_TOKEN":        "",
			"SHOPIFY_ADMIN_TOKEN_ARN":    "",
			"SHOPIFY_API_URL":            "",
			"BODY_BUCKET":                "hookinbox-bodybucket-abcdef012345",
			"PAYLOAD_RETENTION":          "168h",
			"SUBJECT_KEY":                "",
			"SUBJECT_KEY_ARN":            "arn:aws:secretsmanager:us-east-1:123456789012:secret:SubjectKeySecret-AbCdEf",
		})},
	}
	for _, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			checkEnv(t, inv, tpl, tt.function, c, tt.want)
		})
	}
	// A replay hides the DLQ messages it reads for 3 minutes (replay's
	// default Visibility); the function must end before they reappear.
	props, err := tpl.Function("DlqReplayFunction")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := intProp(t, tpl, props["Timeout"], c); err != nil || n >= 180 {
		broken(t, inv, "DlqReplayFunction Timeout = %d (%v), want < 180 s", n, err)
	}
	if events, _ := props["Events"].(map[string]any); len(events) != 0 {
		broken(t, inv, "DlqReplayFunction has events %v; it runs only when a person invokes it", events)
	}
}

func TestTemplateReconcilerSchedule(t *testing.T) {
	const inv = "ReconcilerFunction runs every 5 minutes"
	_, props := projectFunction(t, inv, "ReconcilerFunction")
	evs, _ := props["Events"].(map[string]any)
	var schedules []string
	for _, e := range evs {
		m, _ := e.(map[string]any)
		p, _ := m["Properties"].(map[string]any)
		if m["Type"] == "Schedule" {
			s, _ := p["Schedule"].(string)
			schedules = append(schedules, s)
		}
	}
	if diff := cmp.Diff(schedules, []string{"rate(5 minutes)"}); diff != "" || len(evs) != 1 {
		broken(t, inv, "events %v, want one Schedule rate(5 minutes)", evs)
	}
}

func TestTemplateStuckClaimsAlarm(t *testing.T) {
	const inv = "an alarm on the reconciler's StuckClaims metric notifies the alarm topic, and missing data alarms"
	tpl := loadProject(t)
	c := deployments(t, tpl)["shop-prod"]
	env, err := tpl.FunctionEnv("ReconcilerFunction", c)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, id := range tpl.ByType("AWS::CloudWatch::Alarm") {
		p := tpl.Resources[id].Properties
		if p["MetricName"] != "StuckClaims" {
			continue
		}
		found = true
		ns, err := tpl.ResolveString(p["Namespace"], c)
		if err != nil || ns != env["METRICS_NAMESPACE"] || !strings.Contains(ns, "shop-prod") {
			broken(t, inv, "%s Namespace %q (%v), want the reconciler's METRICS_NAMESPACE %q, per stack", id, ns, err, env["METRICS_NAMESPACE"])
		}
		if _, ok := p["Dimensions"]; ok {
			broken(t, inv, "%s has Dimensions; the reconciler publishes StuckClaims without any", id)
		}
		if p["ComparisonOperator"] != "GreaterThanThreshold" || !isZero(p["Threshold"]) || p["TreatMissingData"] != "breaching" {
			broken(t, inv, "%s: %v %v, missing data %v; want GreaterThanThreshold 0, breaching", id, p["ComparisonOperator"], p["Threshold"], p["TreatMissingData"])
		}
		period, err := intProp(t, tpl, p["Period"], c)
		if err != nil || period < 600 {
			broken(t, inv, "%s Period %d (%v), want >= 600 s: two 5-minute runs per period", id, period, err)
		}
		actions, _ := p["AlarmActions"].([]any)
		if len(actions) != 1 || actions[0] != any(samtemplate.Ref{Name: "AlarmTopic"}) {
			broken(t, inv, "%s AlarmActions %v, want [!Ref AlarmTopic]", id, actions)
		}
	}
	if !found {
		broken(t, inv, "no AWS::CloudWatch::Alarm on StuckClaims")
	}
}
