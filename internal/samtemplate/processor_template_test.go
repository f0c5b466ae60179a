package samtemplate

import (
	"strconv"
	"testing"
	"time"
)

const apiKeyARN = "arn:aws:secretsmanager:eu-west-1:210987654321:secret:stripe-api-key-AbCdEf"

func TestTemplateProcessorEventSource(t *testing.T) {
	const inv = "ProcessorFunction reads EventsQueue in batches with partial batch failures and bounded concurrency"
	tpl := loadProject(t)
	props, err := tpl.Function("ProcessorFunction")
	if err != nil {
		broken(t, inv, "%v", err)
		return
	}
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
	if got := p["Queue"]; got != any(GetAtt{Resource: "EventsQueue", Attribute: "Arn"}) {
		broken(t, inv, "Queue = %#v, want !GetAtt EventsQueue.Arn", got)
	}
	types, _ := strings1(p["FunctionResponseTypes"])
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
	const inv = "the processor's lease outlasts its timeout and it knows the queue's maxReceiveCount"
	tpl := loadProject(t)
	c := deployments(t, tpl)["defaults"]
	env, err := tpl.FunctionEnv("ProcessorFunction", c)
	if err != nil {
		broken(t, inv, "%v", err)
		return
	}
	props, _ := tpl.Function("ProcessorFunction")
	timeout, err := intProp(t, tpl, props["Timeout"], c)
	if err != nil {
		broken(t, inv, "Timeout: %v", err)
		return
	}
	lease, err := time.ParseDuration(env["LEASE_DURATION"])
	if err != nil || lease <= time.Duration(timeout)*time.Second {
		broken(t, inv, "LEASE_DURATION = %q, want a duration longer than Timeout %d s", env["LEASE_DURATION"], timeout)
	}
	redrive, _ := tpl.Resources["EventsQueue"].Properties["RedrivePolicy"].(map[string]any)
	max, _ := intProp(t, tpl, redrive["maxReceiveCount"], c)
	if got, _ := strconv.Atoi(env["MAX_RECEIVE_COUNT"]); got != max {
		broken(t, inv, "MAX_RECEIVE_COUNT = %q, want EventsQueue's maxReceiveCount %d", env["MAX_RECEIVE_COUNT"], max)
	}
	for _, k := range []string{"EVENTS_DLQ_URL", "SHOP_TABLE", "MAIL_FROM", "STRIPE_API_KEY", "STRIPE_API_KEY_ARN"} {
		if _, ok := env[k]; !ok && k != "STRIPE_API_KEY" {
			broken(t, inv, "env has no %s", k)
		}
	}
	if v, ok := env["STRIPE_API_KEY"]; !ok || v != "" {
		broken(t, inv, "STRIPE_API_KEY = %q (present %v), want present and empty: the key comes from Secrets Manager", v, ok)
	}
}

func TestTemplateProcessorPolicy(t *testing.T) {
	checkGrants(t, "ProcessorFunction", func(c Context) []string {
		inboxARN, _ := c.Lookup("InboxTable", "Arn")
		shopARN, _ := c.Lookup("ShopTable", "Arn")
		queue, _ := c.Lookup("EventsQueue", "Arn")
		dlq, _ := c.Lookup("EventsDLQ", "Arn")
		d := c.withDefaults()
		identity := "example.com"
		if v := c.Params["MailFromIdentity"]; v != "" {
			identity = v
		}
		want := []string{
			"dynamodb:GetItem on " + inboxARN,
			"dynamodb:PutItem on " + inboxARN,
			"dynamodb:PutItem on " + shopARN,
			"dynamodb:Query on " + inboxARN,
			"dynamodb:UpdateItem on " + inboxARN,
			"ses:SendEmail on arn:" + d.Partition + ":ses:" + d.Region + ":" + d.AccountID + ":identity/" + identity,
			"sqs:ChangeMessageVisibility on " + queue,
			"sqs:SendMessage on " + dlq,
		}
		if v := c.Params["StripeApiKeyArn"]; v != "" {
			want = append(want, "secretsmanager:GetSecretValue on "+v)
		}
		return want
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
			if m["Name"] == "QueueName" && m["Value"] == any(GetAtt{Resource: "EventsDLQ", Attribute: "QueueName"}) {
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
			if r, ok := a.(Ref); ok && tpl.Resources[r.Name].Type == "AWS::SNS::Topic" {
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
