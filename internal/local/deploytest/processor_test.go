package deploytest

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/iamcheck"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

const apiKeyARN = "arn:aws:secretsmanager:eu-west-1:210987654321:secret:stripe-api-key-AbCdEf"

func TestTemplateProcessorEventSource(t *testing.T) {
	const inv = "ProcessorFunction reads EventsQueue in batches with partial batch failures and bounded concurrency"
	tpl, props := projectFunction(t, inv, "ProcessorFunction")
	evs, _ := props["Events"].(map[string]any)
	var sqsEvents []map[string]any
	for _, e := range evs {
		if m, _ := e.(map[string]any); m["Type"] == "SQS" {
			p, _ := m["Properties"].(map[string]any)
			sqsEvents = append(sqsEvents, p)
		}
	}
	if len(sqsEvents) != 1 {
		broken(t, inv, "%d SQS events, want 1", len(sqsEvents))
		return
	}
	p := sqsEvents[0]
	c := deployments(t, tpl)["defaults"]
	if got := p["Queue"]; got != any(samtemplate.GetAtt{Resource: "EventsQueue", Attribute: "Arn"}) {
		broken(t, inv, "Queue = %#v, want !GetAtt EventsQueue.Arn", got)
	}
	types, _ := iamcheck.StringList(p["FunctionResponseTypes"])
	if !contains(types, "ReportBatchItemFailures") {
		broken(t, inv, "FunctionResponseTypes = %v, want ReportBatchItemFailures", types)
	}
	if n, err := intProp(t, tpl, p["BatchSize"], c); err != nil || n < 1 || n > 10 {
		broken(t, inv, "BatchSize = %d (%v), want 1..10", n, err)
	}
	if n, err := intProp(t, tpl, p["MaximumBatchingWindowInSeconds"], c); err != nil || n < 0 || n > 300 {
		broken(t, inv, "MaximumBatchingWindowInSeconds = %d (%v), want 0..300", n, err)
	}
	scaling, _ := p["ScalingConfig"].(map[string]any)
	if n, err := intProp(t, tpl, scaling["MaximumConcurrency"], c); err != nil || n < 2 {
		broken(t, inv, "ScalingConfig.MaximumConcurrency = %d (%v), want >= 2 (Lambda's minimum)", n, err)
	}
}

func TestTemplateProcessorLeaseAndRedrive(t *testing.T) {
	const inv = "the processor's timing keeps the rule (Timeout < lease < VisibilityTimeout, ...) and it knows the queue's maxReceiveCount"
	tpl := loadProject(t)
	for name, c := range deployments(t, tpl) {
		env, err := tpl.FunctionEnv("ProcessorFunction", c)
		if err != nil {
			broken(t, inv, "%s: %v", name, err)
			continue
		}
		props, _ := tpl.Function("ProcessorFunction")
		queue := tpl.Resources["EventsQueue"].Properties
		redrive, _ := queue["RedrivePolicy"].(map[string]any)
		timing, err := processorTiming(t, tpl, c, props, env, queue, redrive)
		if err != nil {
			broken(t, inv, "%s: %v", name, err)
			continue
		}
		if err := timing.Validate(); err != nil {
			broken(t, inv, "%s: %v", name, err)
		}
		// A worker's death costs its events one receive when their
		// messages come back after every lease it could have taken has
		// ended (the last message is started with the budget left).
		if timing.Visibility <= timing.FunctionTimeout-timing.Budget+timing.Lease {
			broken(t, inv, "%s: a crash costs 2 receives, want 1 (VisibilityTimeout above Timeout - MESSAGE_BUDGET + LEASE_DURATION)", name)
		}
		if got, _ := strconv.Atoi(env["MAX_RECEIVE_COUNT"]); got != timing.MaxReceiveCount {
			broken(t, inv, "%s: MAX_RECEIVE_COUNT = %q, want EventsQueue's maxReceiveCount %d", name, env["MAX_RECEIVE_COUNT"], timing.MaxReceiveCount)
		}
		for _, k := range []string{"EVENTS_DLQ_URL", "SHOP_TABLE", "MAIL_FROM", "STRIPE_API_KEY", "STRIPE_API_KEY_ARN"} {
			if _, ok := env[k]; !ok && k != "STRIPE_API_KEY" {
				broken(t, inv, "%s: env has no %s", name, k)
			}
		}
		if v, ok := env["STRIPE_API_KEY"]; !ok || v != "" {
			broken(t, inv, "%s: STRIPE_API_KEY = %q (present %v), want present and empty: the key comes from Secrets Manager", name, v, ok)
		}
	}
}

// processorTiming reads the processor's timing from the template: the
// function's Timeout, its LEASE_DURATION, MESSAGE_BUDGET and
// OUTCOME_RESERVE, and the events queue's settings.
func processorTiming(t *testing.T, tpl *samtemplate.Template, c samtemplate.Context, props map[string]any, env map[string]string, queue, redrive map[string]any) (Timing, error) {
	t.Helper()
	var tm Timing
	seconds := func(v any, what string) (time.Duration, error) {
		n, err := intProp(t, tpl, v, c)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		return time.Duration(n) * time.Second, nil
	}
	var err error
	if tm.FunctionTimeout, err = seconds(props["Timeout"], "Timeout"); err != nil {
		return tm, err
	}
	if tm.Visibility, err = seconds(queue["VisibilityTimeout"], "VisibilityTimeout"); err != nil {
		return tm, err
	}
	if tm.Retention, err = seconds(queue["MessageRetentionPeriod"], "MessageRetentionPeriod"); err != nil {
		return tm, err
	}
	max, err := intProp(t, tpl, redrive["maxReceiveCount"], c)
	if err != nil {
		return tm, fmt.Errorf("maxReceiveCount: %w", err)
	}
	tm.MaxReceiveCount = max
	for k, d := range map[string]*time.Duration{"LEASE_DURATION": &tm.Lease, "MESSAGE_BUDGET": &tm.Budget, "OUTCOME_RESERVE": &tm.Reserve} {
		s := env[k]
		if *d, err = time.ParseDuration(s); err != nil {
			return tm, fmt.Errorf("%s = %q: %w", k, s, err)
		}
	}
	return tm, nil
}

func TestTemplateProcessorPolicy(t *testing.T) {
	checkGrants(t, "ProcessorFunction", "StripeApiKeyArn", func(c samtemplate.Context) []string {
		inbox, shop, queue, dlq := arn(c, "InboxTable"), arn(c, "ShopTable"), arn(c, "EventsQueue"), arn(c, "EventsDLQ")
		d := c.WithDefaults()
		identity := "example.com"
		if v := c.Params["MailFromIdentity"]; v != "" {
			identity = v
		}
		var bridge []string
		if c.Params["StripeEventBridgeSource"] != "" {
			// An erasure sweeps the Stripe EventBridge DLQ.
			q := arn(c, "StripeEventBridgeDLQ")
			bridge = []string{"sqs:ChangeMessageVisibility on " + q, "sqs:DeleteMessage on " + q, "sqs:ReceiveMessage on " + q}
		}
		return append(bridge,
			"dynamodb:BatchWriteItem on "+inbox,
			"dynamodb:GetItem on "+inbox,
			"dynamodb:PutItem on "+inbox,
			"dynamodb:PutItem on "+shop,
			"dynamodb:Query on "+inbox,
			"dynamodb:Query on "+inbox+"/index/pending",
			"dynamodb:UpdateItem on "+inbox,
			"s3:DeleteObject on "+bodies(c),
			"s3:GetObject on "+bodies(c),
			"s3:PutObject on "+bodies(c),
			"secretsmanager:GetSecretValue on "+ref(c, "SubjectKeySecret"),
			"ses:SendEmail on arn:"+d.Partition+":ses:"+d.Region+":"+d.AccountID+":identity/"+identity,
			"sqs:ChangeMessageVisibility on "+queue,
			// Lambda's event source polls with the processor's role.
			"sqs:DeleteMessage on "+queue,
			"sqs:GetQueueAttributes on "+queue,
			"sqs:ReceiveMessage on "+queue,
			"sqs:SendMessage on "+dlq,
			"sqs:SendMessage on "+queue,
		)
	})
}

func TestTemplateDLQAlarm(t *testing.T) {
	const inv = "an alarm on EventsDLQ's visible messages > 0 notifies the alarm topic"
	tpl := loadProject(t)
	found := false
	for _, id := range tpl.ByType("AWS::CloudWatch::Alarm") {
		p := tpl.Resources[id].Properties
		dims, _ := p["Dimensions"].([]any)
		onDLQ := false
		for _, d := range dims {
			m, _ := d.(map[string]any)
			if m["Name"] == "QueueName" && m["Value"] == any(samtemplate.GetAtt{Resource: "EventsDLQ", Attribute: "QueueName"}) {
				onDLQ = true
			}
		}
		if !onDLQ || p["MetricName"] != "ApproximateNumberOfMessagesVisible" {
			continue
		}
		found = true
		if p["Namespace"] != "AWS/SQS" || p["ComparisonOperator"] != "GreaterThanThreshold" || !isZero(p["Threshold"]) {
			broken(t, inv, "%s: Namespace %v, %v %v; want AWS/SQS, GreaterThanThreshold 0", id, p["Namespace"], p["ComparisonOperator"], p["Threshold"])
		}
		actions, _ := p["AlarmActions"].([]any)
		notifies := false
		for _, a := range actions {
			if r, ok := a.(samtemplate.Ref); ok && tpl.Resources[r.Name].Type == "AWS::SNS::Topic" {
				notifies = true
			}
		}
		if !notifies {
			broken(t, inv, "%s: AlarmActions %v name no SNS topic", id, actions)
		}
	}
	if !found {
		broken(t, inv, "no AWS::CloudWatch::Alarm on ApproximateNumberOfMessagesVisible of EventsDLQ")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isZero(v any) bool {
	switch v := v.(type) {
	case int:
		return v == 0
	case int64:
		return v == 0
	case float64:
		return v == 0
	case string:
		return v == "0"
	}
	return false
}
