package deploytest

// The invariants of the project's template.yaml. Each failure names the
// invariant it breaks and why it matters; docs/architecture.md states the
// rules they hold the template to.

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/iamcheck"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

const (
	projectTemplate = "../../../template.yaml"
	projectMakefile = "../../../Makefile"
)

func loadProject(t *testing.T) *samtemplate.Template {
	t.Helper()
	tpl, err := samtemplate.Load(projectTemplate)
	if err != nil {
		t.Fatalf("invariant %q broken: %v", "template.yaml parses", err)
	}
	return tpl
}

// projectFunction loads template.yaml and the properties of function id,
// merged with Globals; it stops the test, naming inv, when either fails.
func projectFunction(t *testing.T, inv, id string) (*samtemplate.Template, map[string]any) {
	t.Helper()
	tpl := loadProject(t)
	props, err := tpl.Function(id)
	if err != nil {
		broken(t, inv, "%v", err)
		t.FailNow()
	}
	return tpl, props
}

// projectResource loads template.yaml and the properties of resource id;
// it stops the test, naming inv, when id is not a typ.
func projectResource(t *testing.T, inv, id, typ string) (*samtemplate.Template, map[string]any) {
	t.Helper()
	tpl := loadProject(t)
	r := tpl.Resources[id]
	if r.Type != typ {
		broken(t, inv, "%s type = %q, want %q", id, r.Type, typ)
		t.FailNow()
	}
	return tpl, r.Properties
}

// defaultsEnv returns vars and what every function that works on the inbox
// has in its environment in the defaults deployment.
func defaultsEnv(vars map[string]string) map[string]string {
	env := map[string]string{
		"INBOX_TABLE":       "hookinbox-inbox",
		"EVENTS_QUEUE_URL":  "https://sqs.us-east-1.amazonaws.com/123456789012/hookinbox-events",
		"AWS_ENDPOINT_URL":  "", // from Globals, for sam local and LocalStack
		"METRICS_NAMESPACE": "hookinbox/hookinbox",
	}
	maps.Copy(env, vars)
	return env
}

// checkEnv asserts function's environment resolved in deployment c.
func checkEnv(t *testing.T, inv string, tpl *samtemplate.Template, function string, c samtemplate.Context, want map[string]string) {
	t.Helper()
	got, err := tpl.FunctionEnv(function, c)
	if err != nil {
		broken(t, inv, "%s: %v", function, err)
		return
	}
	if diff := cmp.Diff(got, want); diff != "" {
		broken(t, inv, "%s environment (-got +want):\n%s", function, diff)
	}
}

// broken reports a broken invariant of template.yaml.
func broken(t *testing.T, invariant, format string, args ...any) {
	t.Helper()
	t.Errorf("template.yaml invariant %q broken: %s", invariant, fmt.Sprintf(format, args...))
}

const fakeAPIID = "api0123456"

// deployment returns c with a Lookup that names resources the way
// CloudFormation would in a real account: from the template's own TableName
// and QueueName properties, resolved in c.
func deployment(t *testing.T, tpl *samtemplate.Template, c samtemplate.Context) samtemplate.Context {
	t.Helper()
	d := c.WithDefaults()
	d.Lookup = func(id, attr string) (string, error) {
		r := tpl.Resources[id]
		name := func(prop string) (string, error) {
			if r.Properties[prop] == nil {
				return "", fmt.Errorf("fake deployment: %s has no %s", id, prop)
			}
			return tpl.ResolveString(r.Properties[prop], d)
		}
		switch r.Type {
		case "AWS::SQS::Queue":
			n, err := name("QueueName")
			if err != nil {
				return "", err
			}
			switch attr {
			case "", "QueueUrl":
				return fmt.Sprintf("https://sqs.%s.%s/%s/%s", d.Region, d.URLSuffix, d.AccountID, n), nil
			case "Arn":
				return fmt.Sprintf("arn:%s:sqs:%s:%s:%s", d.Partition, d.Region, d.AccountID, n), nil
			case "QueueName":
				return n, nil
			}
		case "AWS::DynamoDB::Table":
			n, err := name("TableName")
			if err != nil {
				return "", err
			}
			switch attr {
			case "":
				return n, nil
			case "Arn":
				return fmt.Sprintf("arn:%s:dynamodb:%s:%s:table/%s", d.Partition, d.Region, d.AccountID, n), nil
			}
		case "AWS::Serverless::HttpApi":
			switch attr {
			case "":
				return fakeAPIID, nil
			case "ApiEndpoint":
				return fmt.Sprintf("https://%s.execute-api.%s.%s", fakeAPIID, d.Region, d.URLSuffix), nil
			}
		case samtemplate.FunctionType:
			n := d.StackName + "-" + id + "-AbCdEf012345"
			switch attr {
			case "":
				return n, nil
			case "Arn":
				return fmt.Sprintf("arn:%s:lambda:%s:%s:function:%s", d.Partition, d.Region, d.AccountID, n), nil
			}
		case "AWS::CloudWatch::Alarm":
			if attr == "Arn" {
				return fmt.Sprintf("arn:%s:cloudwatch:%s:%s:alarm:%s-%s-AbCdEf012345", d.Partition, d.Region, d.AccountID, d.StackName, id), nil
			}
		case "AWS::KMS::Key":
			keyID := "0b5e7a1c-0000-4000-8000-" + fmt.Sprintf("%012x", len(id))
			switch attr {
			case "", "KeyId":
				return keyID, nil
			case "Arn":
				return fmt.Sprintf("arn:%s:kms:%s:%s:key/%s", d.Partition, d.Region, d.AccountID, keyID), nil
			}
		case "AWS::IAM::Role":
			if attr == "Arn" {
				return fmt.Sprintf("arn:%s:iam::%s:role/%s-%s-AbCdEf012345", d.Partition, d.AccountID, d.StackName, id), nil
			}
		case "AWS::Events::EventBus":
			n, err := name("Name")
			if err != nil {
				return "", err
			}
			switch attr {
			case "", "Name":
				return n, nil
			case "Arn":
				return fmt.Sprintf("arn:%s:events:%s:%s:event-bus/%s", d.Partition, d.Region, d.AccountID, n), nil
			}
		case "AWS::S3::Bucket":
			n := strings.ToLower(d.StackName + "-" + id + "-abcdef012345")
			switch attr {
			case "":
				return n, nil
			case "Arn":
				return fmt.Sprintf("arn:%s:s3:::%s", d.Partition, n), nil
			}
		case "AWS::SecretsManager::Secret":
			if attr == "" || attr == "Id" {
				return fmt.Sprintf("arn:%s:secretsmanager:%s:%s:secret:%s-AbCdEf", d.Partition, d.Region, d.AccountID, id), nil
			}
		case "AWS::Logs::LogGroup":
			switch attr {
			case "":
				return d.StackName + "-" + id + "-AbCdEf012345", nil
			case "Arn":
				return fmt.Sprintf("arn:%s:logs:%s:%s:log-group:%s-%s-AbCdEf012345:*", d.Partition, d.Region, d.AccountID, d.StackName, id), nil
			}
		case "AWS::SNS::Topic":
			if attr == "" || attr == "TopicArn" {
				return fmt.Sprintf("arn:%s:sns:%s:%s:%s-%s-AbCdEf012345", d.Partition, d.Region, d.AccountID, d.StackName, id), nil
			}
		}
		return "", fmt.Errorf("fake deployment: no physical value for %s (%s) attribute %q", id, r.Type, attr)
	}
	return d
}

const secretARN = "arn:aws:secretsmanager:eu-west-1:210987654321:secret:stripe-webhook-AbCdEf"

// deployments are the contexts every invariant is checked in: the defaults,
// and another stack in another region and account with every parameter set.
func deployments(t *testing.T, tpl *samtemplate.Template) map[string]samtemplate.Context {
	t.Helper()
	return map[string]samtemplate.Context{
		"defaults": deployment(t, tpl, samtemplate.Context{}),
		"shop-prod": deployment(t, tpl, samtemplate.Context{
			StackName: "shop-prod", Region: "eu-west-1", AccountID: "210987654321",
			Params: map[string]string{
				"StripeWebhookSecretArn":  secretARN,
				"StripeTolerance":         "120s",
				"MaxBodyBytes":            "65536",
				"SecretMaxAge":            "2m",
				"StripeApiKeyArn":         apiKeyARN,
				"MailFrom":                "orders@shop.example.org",
				"MailFromIdentity":        "shop.example.org",
				"StripeEventBridgeSource": "aws.partner/stripe.com/ed_61ShopProd0EventBridge",
			},
		}),
	}
}

// makeTargets returns the targets of the Makefile's rules (not its
// variable assignments).
func makeTargets(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("invariant %q broken: %v", "the Makefile builds every function", err)
	}
	defer f.Close()
	targets := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") {
			continue // recipe
		}
		line, _, _ = strings.Cut(line, "#")
		before, after, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(before, "=") || strings.HasPrefix(after, "=") || strings.HasPrefix(after, ":=") {
			continue // not a rule, or an assignment
		}
		if strings.Contains(after, "=") {
			continue // target-specific variable
		}
		for _, target := range strings.Fields(before) {
			targets[target] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return targets
}

func TestTemplateFunctionsBuildWithMakefile(t *testing.T) {
	const inv = "every function is built by `make build-<LogicalId>` into bootstrap"
	tpl := loadProject(t)
	targets := makeTargets(t, projectMakefile)
	ids := tpl.ByType(samtemplate.FunctionType)
	if len(ids) == 0 {
		broken(t, inv, "no %s resources", samtemplate.FunctionType)
	}
	for _, id := range ids {
		props, err := tpl.Function(id)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := props["Handler"], any("bootstrap"); got != want {
			broken(t, inv, "%s Handler = %#v, want %#v", id, got, want)
		}
		if got, want := props["CodeUri"], any("."); got != want {
			broken(t, inv, "%s CodeUri = %#v, want %#v (the root go.mod must be in the build)", id, got, want)
		}
		if got, want := tpl.Resources[id].Metadata["BuildMethod"], any("makefile"); got != want {
			broken(t, inv, "%s Metadata.BuildMethod = %#v, want %#v", id, got, want)
		}
		if !targets["build-"+id] {
			broken(t, inv, "Makefile has no build-%s target", id)
		}
		if got, want := props["Runtime"], any("provided.al2023"); got != want {
			broken(t, inv, "%s Runtime = %#v, want %#v", id, got, want)
		}
		if diff := cmp.Diff(props["Architectures"], any([]any{"arm64"})); diff != "" {
			broken(t, inv, "%s Architectures (merged with Globals) (-got +want):\n%s", id, diff)
		}
	}
}

func TestTemplateGlobals(t *testing.T) {
	const inv = "Globals.Function runs provided.al2023 on arm64"
	tpl := loadProject(t)
	g, _ := tpl.Globals["Function"].(map[string]any)
	if got, want := g["Runtime"], any("provided.al2023"); got != want {
		broken(t, inv, "Globals.Function.Runtime = %#v, want %#v", got, want)
	}
	if diff := cmp.Diff(g["Architectures"], any([]any{"arm64"})); diff != "" {
		broken(t, inv, "Globals.Function.Architectures (-got +want):\n%s", diff)
	}
}

func TestTemplateReceiverRoute(t *testing.T) {
	const inv = "ReceiverFunction serves POST /webhooks/{provider} on WebhookApi"
	tpl, props := projectFunction(t, inv, "ReceiverFunction")
	if got, want := tpl.Resources["WebhookApi"].Type, "AWS::Serverless::HttpApi"; got != want {
		broken(t, inv, "WebhookApi type = %q, want %q", got, want)
	}
	events, _ := props["Events"].(map[string]any)
	want := map[string]any{
		"Webhook": map[string]any{"ApiId": samtemplate.Ref{Name: "WebhookApi"}, "Path": "/webhooks/{provider}", "Method": "POST"},
		"GoPayNotification": map[string]any{"ApiId": samtemplate.Ref{Name: "WebhookApi"}, "Path": "/webhooks/gopay", "Method": "GET",
			"RouteSettings": map[string]any{ // TestTemplateUnsignedRouteThrottles
				"ThrottlingRateLimit": samtemplate.Ref{Name: "GoPayThrottleRate"}, "ThrottlingBurstLimit": samtemplate.Ref{Name: "GoPayThrottleBurst"}}},
		"MollieNotification": map[string]any{"ApiId": samtemplate.Ref{Name: "WebhookApi"}, "Path": "/webhooks/mollie", "Method": "POST",
			"RouteSettings": map[string]any{ // TestTemplateUnsignedRouteThrottles
				"ThrottlingRateLimit": samtemplate.Ref{Name: "MollieThrottleRate"}, "ThrottlingBurstLimit": samtemplate.Ref{Name: "MollieThrottleBurst"}}},
	}
	got := map[string]any{}
	for name, e := range events {
		m, _ := e.(map[string]any)
		if m["Type"] != "HttpApi" {
			broken(t, inv, "event %s is a %v, want HttpApi", name, m["Type"])
		}
		got[name] = m["Properties"]
	}
	if diff := cmp.Diff(got, want); diff != "" {
		broken(t, inv, "routes (-got +want):\n%s", diff)
	}
}

// TestTemplateProviderSettings: every built-in provider can be
// enabled from the template: its secret variable is declared empty (so
// `sam local --env-vars` can set it) and its _ARN variable comes from a
// parameter.
func TestTemplateProviderSettings(t *testing.T) {
	const inv = "ReceiverFunction declares every provider's secret variables"
	tpl, props := projectFunction(t, inv, "ReceiverFunction")
	vars, _ := props["Environment"].(map[string]any)["Variables"].(map[string]any)
	for _, p := range builtinProviders() {
		secretEnv := p.Webhook().SecretEnv
		if got, ok := vars[secretEnv]; !ok || got != "" {
			broken(t, inv, "%s = %#v, want present and \"\" so `sam local --env-vars` can set it", secretEnv, got)
		}
		ref, ok := vars[secretEnv+"_ARN"].(samtemplate.Ref)
		if !ok {
			broken(t, inv, "%s_ARN = %#v, want a !Ref to a parameter", secretEnv, vars[secretEnv+"_ARN"])
			continue
		}
		if _, ok := tpl.Parameters[ref.Name]; !ok {
			broken(t, inv, "%s_ARN refers to %s, which is not a parameter", secretEnv, ref.Name)
		}
	}
}

func TestTemplateReceiverEnv(t *testing.T) {
	const inv = "ReceiverFunction's environment names the inbox, the queue and the Stripe settings"
	tpl := loadProject(t)
	// Its unresolved secret variables: TestTemplateProviderSettings.
	tests := []struct {
		name string
		want map[string]string
	}{
		{"defaults", defaultsEnv(map[string]string{
			"STRIPE_WEBHOOK_SECRET":     "",
			"STRIPE_WEBHOOK_SECRET_ARN": "",
			"STRIPE_TOLERANCE":          "300s",
			"PADDLE_TOLERANCE":          "300s",
			"MAX_BODY_BYTES":            "6258688",
			"SECRET_MAX_AGE":            "5m",
			"BODY_BUCKET":               "hookinbox-bodybucket-abcdef012345",
			"SUBJECT_KEY":               "",
			"SUBJECT_KEY_ARN":           "arn:aws:secretsmanager:us-east-1:123456789012:secret:SubjectKeySecret-AbCdEf",
		})},
		{"shop-prod", map[string]string{
			"INBOX_TABLE":               "shop-prod-inbox",
			"EVENTS_QUEUE_URL":          "https://sqs.eu-west-1.amazonaws.com/210987654321/shop-prod-events",
			"STRIPE_WEBHOOK_SECRET":     "",
			"STRIPE_WEBHOOK_SECRET_ARN": secretARN,
			"STRIPE_TOLERANCE":          "120s",
			"PADDLE_TOLERANCE":          "300s",
			"MAX_BODY_BYTES":            "65536",
			"SECRET_MAX_AGE":            "2m",
			"BODY_BUCKET":               "shop-prod-bodybucket-abcdef012345",
			"SUBJECT_KEY":               "",
			"SUBJECT_KEY_ARN":           "arn:aws:secretsmanager:eu-west-1:210987654321:secret:SubjectKeySecret-AbCdEf",
			"AWS_ENDPOINT_URL":          "",
			"METRICS_NAMESPACE":         "hookinbox/shop-prod",
		}},
	}
	// The other providers are disabled in both deployments.
	for _, tt := range tests {
		for _, p := range builtinProviders() {
			if p.Name() != stripe.Name {
				tt.want[p.Webhook().SecretEnv], tt.want[p.Webhook().SecretEnv+"_ARN"] = "", ""
			}
		}
	}
	ctxs := deployments(t, tpl)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkEnv(t, inv, tpl, "ReceiverFunction", ctxs[tt.name], tt.want)
		})
	}
}

func TestTemplateInboxTable(t *testing.T) {
	const inv = "InboxTable is pk/sk, on demand, with TTL on expires_at, PITR, SSE and a pending index without payloads"
	tpl, props := projectResource(t, inv, "InboxTable", "AWS::DynamoDB::Table")
	v, err := tpl.Resolve(props, deployments(t, tpl)["defaults"])
	if err != nil {
		broken(t, inv, "%v", err)
		return
	}
	p := v.(map[string]any)
	checks := []struct {
		prop string
		want any
	}{
		{"TableName", "hookinbox-inbox"},
		{"KeySchema", []any{
			map[string]any{"AttributeName": "pk", "KeyType": "HASH"},
			map[string]any{"AttributeName": "sk", "KeyType": "RANGE"},
		}},
		{"BillingMode", "PAY_PER_REQUEST"},
		{"TimeToLiveSpecification", map[string]any{"AttributeName": "expires_at", "Enabled": true}},
		{"PointInTimeRecoverySpecification", map[string]any{"PointInTimeRecoveryEnabled": true}},
		{"SSESpecification", map[string]any{"SSEEnabled": true}},
		// The sparse pending index projects what the store lists of an
		// unfinished event, never an inline payload.
		{"GlobalSecondaryIndexes", []any{map[string]any{
			"IndexName": inbox.PendingIndex,
			"KeySchema": []any{
				map[string]any{"AttributeName": "pending", "KeyType": "HASH"},
				map[string]any{"AttributeName": "enqueued_at", "KeyType": "RANGE"},
			},
			"Projection": map[string]any{"ProjectionType": "INCLUDE", "NonKeyAttributes": anys(inbox.PendingAttributes)},
		}, map[string]any{
			// The sparse retain index lists finished events whose payload
			// is still kept, by key only.
			"IndexName": inbox.RetainIndex,
			"KeySchema": []any{
				map[string]any{"AttributeName": "retain", "KeyType": "HASH"},
				map[string]any{"AttributeName": "processed_at", "KeyType": "RANGE"},
			},
			"Projection": map[string]any{"ProjectionType": "KEYS_ONLY"},
		}}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(p[c.prop], c.want); diff != "" {
			broken(t, inv, "InboxTable %s (-got +want):\n%s", c.prop, diff)
		}
	}
	defs := map[string]any{}
	attrs, _ := p["AttributeDefinitions"].([]any)
	for _, a := range attrs {
		m, _ := a.(map[string]any)
		name, _ := m["AttributeName"].(string)
		defs[name] = m["AttributeType"]
	}
	for _, key := range []string{"pk", "sk"} {
		if got, want := defs[key], any("S"); got != want {
			broken(t, inv, "InboxTable AttributeDefinitions %s type = %#v, want %#v", key, got, want)
		}
	}
}

// anys returns ss as the YAML decoder gives a list.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// intProp resolves a numeric property to an int.
func intProp(t *testing.T, tpl *samtemplate.Template, v any, c samtemplate.Context) (int, error) {
	t.Helper()
	s, err := tpl.ResolveString(v, c)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(s)
}

func TestTemplateEventsQueue(t *testing.T) {
	const inv = "EventsQueue redrives to EventsDLQ after 5 receives and outlasts the processor"
	tpl, queue := projectResource(t, inv, "EventsQueue", "AWS::SQS::Queue")
	for name, c := range deployments(t, tpl) {
		t.Run(name, func(t *testing.T) {
			redrive, _ := queue["RedrivePolicy"].(map[string]any)
			if got, want := redrive["deadLetterTargetArn"], any(samtemplate.GetAtt{Resource: "EventsDLQ", Attribute: "Arn"}); got != want {
				broken(t, inv, "RedrivePolicy.deadLetterTargetArn = %#v, want !GetAtt EventsDLQ.Arn", got)
			}
			got, err := intProp(t, tpl, redrive["maxReceiveCount"], c)
			if err != nil || got != 5 {
				broken(t, inv, "RedrivePolicy.maxReceiveCount = %d (%v), want 5", got, err)
			}

			minVisibility, why := 180, "no ProcessorFunction yet: 6 × the planned 30 s"
			if _, ok := tpl.Resources["ProcessorFunction"]; ok {
				props, err := tpl.Function("ProcessorFunction")
				if err != nil {
					t.Fatal(err)
				}
				timeout, err := intProp(t, tpl, props["Timeout"], c)
				if err != nil {
					broken(t, inv, "ProcessorFunction Timeout: %v", err)
					return
				}
				minVisibility, why = 6*timeout, fmt.Sprintf("6 × ProcessorFunction Timeout %d s", timeout)
			}
			vis, err := intProp(t, tpl, queue["VisibilityTimeout"], c)
			if err != nil || vis < minVisibility {
				broken(t, inv, "VisibilityTimeout = %d (%v), want >= %d (%s)", vis, err, minVisibility, why)
			}
		})
	}
}

func TestTemplateEventsDLQ(t *testing.T) {
	const inv = "EventsDLQ keeps messages 14 days and allows redrive only from EventsQueue"
	tpl, dlq := projectResource(t, inv, "EventsDLQ", "AWS::SQS::Queue")
	for name, c := range deployments(t, tpl) {
		t.Run(name, func(t *testing.T) {
			retention, err := intProp(t, tpl, dlq["MessageRetentionPeriod"], c)
			if err != nil || retention != 1209600 {
				broken(t, inv, "MessageRetentionPeriod = %d (%v), want 1209600", retention, err)
			}
			got, err := tpl.Resolve(dlq["RedriveAllowPolicy"], c)
			if err != nil {
				broken(t, inv, "RedriveAllowPolicy: %v", err)
				return
			}
			queueARN, err := c.Lookup("EventsQueue", "Arn")
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"redrivePermission": "byQueue", "sourceQueueArns": []any{queueARN}}
			if diff := cmp.Diff(got, want); diff != "" {
				broken(t, inv, "RedriveAllowPolicy must name EventsQueue's ARN (-got +want):\n%s", diff)
			}
		})
	}
}

// grants returns "action on resource" for every Allow in a role's resolved
// policy documents, and an error for anything that is not an explicit,
// specific statement.
func grants(docs []any) ([]string, error) {
	var out []string
	for i, d := range docs {
		doc, _ := d.(map[string]any)
		stmts, ok := doc["Statement"].([]any)
		if !ok {
			return nil, fmt.Errorf("policy %d Statement is %s, want a list", i, fmt.Sprint(doc["Statement"]))
		}
		for j, s := range stmts {
			st, _ := s.(map[string]any)
			where := fmt.Sprintf("policy %d statement %d", i, j)
			for _, k := range []string{"NotAction", "NotResource", "NotPrincipal"} {
				if _, ok := st[k]; ok {
					return nil, fmt.Errorf("%s uses %s", where, k)
				}
			}
			if st["Effect"] != "Allow" {
				continue
			}
			actions, err := iamcheck.StringList(st["Action"])
			if err != nil {
				return nil, fmt.Errorf("%s Action: %w", where, err)
			}
			resources, err := iamcheck.StringList(st["Resource"])
			if err != nil {
				return nil, fmt.Errorf("%s Resource: %w", where, err)
			}
			for _, a := range actions {
				if strings.Contains(a, "*") {
					return nil, fmt.Errorf("%s grants wildcard action %q", where, a)
				}
				for _, r := range resources {
					if r == "" || strings.Contains(r, "*") && !prefixObjects(r) {
						return nil, fmt.Errorf("%s grants %s on %q, want a specific resource", where, a, r)
					}
					out = append(out, a+" on "+r)
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// prefixObjects reports whether r is the objects under one prefix of one
// named bucket (arn:aws:s3:::bucket/prefix/*): S3 has no narrower
// resource for objects whose names the functions make.
func prefixObjects(r string) bool {
	rest, ok := strings.CutSuffix(r, "/*")
	bucket, prefix, found := strings.Cut(strings.TrimPrefix(rest, "arn:aws:s3:::"), "/")
	return ok && found && strings.HasPrefix(r, "arn:aws:s3:::") && bucket != "" && prefix != "" && !strings.Contains(rest, "*")
}

func TestTemplateReceiverPolicy(t *testing.T) {
	checkGrants(t, "ReceiverFunction", "StripeWebhookSecretArn", func(c samtemplate.Context) []string {
		table, queue := arn(c, "InboxTable"), arn(c, "EventsQueue")
		return []string{
			"dynamodb:GetItem on " + table,
			"dynamodb:PutItem on " + table,
			"dynamodb:UpdateItem on " + table,
			"s3:PutObject on " + bodies(c),
			"secretsmanager:GetSecretValue on " + ref(c, "SubjectKeySecret"),
			"sqs:SendMessage on " + queue,
		}
	})
}

// ref returns the !Ref value of resource id in deployment c.
func ref(c samtemplate.Context, id string) string {
	s, _ := c.Lookup(id, "")
	return s
}

// bodies returns the ARN of the inbox's objects in the body bucket of
// deployment c: the only S3 resource a function is granted.
func bodies(c samtemplate.Context) string {
	return arn(c, "BodyBucket") + "/" + inbox.BodyPrefix + "*"
}

// arn returns the ARN of resource id in deployment c.
func arn(c samtemplate.Context, id string) string {
	s, _ := c.Lookup(id, "Arn")
	return s
}

// checkGrants asserts that function's role, as the SAM transform deploys
// it, grants exactly what want returns for each deployment, each on a
// specific resource, and secretsmanager:GetSecretValue on the ARN that
// parameter secretParam names, in the deployments that set it.
func checkGrants(t *testing.T, function, secretParam string, want func(c samtemplate.Context) []string) {
	t.Helper()
	inv := function + "'s role grants only its own calls, each on one resource"
	tpl := translated(t, projectTemplate)
	role, err := roleOf(tpl, function)
	if err != nil {
		broken(t, inv, "%v", err)
		return
	}
	for name, c := range deployments(t, tpl) {
		t.Run(name, func(t *testing.T) {
			w := want(c)
			if v := c.Params[secretParam]; v != "" {
				w = append(w, "secretsmanager:GetSecretValue on "+v)
			}
			sort.Strings(w)
			docs, _, err := rolePermissions(tpl, c, role)
			if err != nil {
				broken(t, inv, "%s: %v", role, err)
				return
			}
			got, err := grants(docs)
			if err != nil {
				broken(t, inv, "%s: %v", role, err)
				return
			}
			if diff := cmp.Diff(got, w); diff != "" {
				broken(t, inv, "%s grants (-got +want):\n%s", role, diff)
			}
		})
	}
}

func TestTemplateOutputs(t *testing.T) {
	const inv = "Outputs give the webhook URL, the table and both queues"
	tpl := loadProject(t)
	c := deployments(t, tpl)["defaults"]
	want := map[string]string{
		"WebhookUrl":     "https://" + fakeAPIID + ".execute-api.us-east-1.amazonaws.com/webhooks/stripe",
		"InboxTableName": "hookinbox-inbox",
		"EventsQueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/hookinbox-events",
		"EventsDLQUrl":   "https://sqs.us-east-1.amazonaws.com/123456789012/hookinbox-events-dlq",
	}
	got := map[string]string{}
	for name, o := range tpl.Outputs {
		m, _ := o.(map[string]any)
		s, err := tpl.ResolveString(m["Value"], c)
		if err != nil {
			broken(t, inv, "output %s: %v", name, err)
			continue
		}
		if _, ok := want[name]; ok {
			got[name] = s
		}
	}
	if diff := cmp.Diff(got, want); diff != "" {
		broken(t, inv, "outputs (-got +want):\n%s", diff)
	}
}

func TestTemplateResolves(t *testing.T) {
	const inv = "every intrinsic names a parameter, condition or resource that exists"
	tpl := loadProject(t)
	for name, c := range deployments(t, tpl) {
		t.Run(name, func(t *testing.T) {
			for id, r := range tpl.Resources {
				if r.Condition != "" {
					if _, ok := tpl.Conditions[r.Condition]; !ok {
						broken(t, inv, "%s Condition %s is not in Conditions", id, r.Condition)
					}
				}
				if _, err := tpl.Resolve(r.Properties, c); err != nil {
					broken(t, inv, "%s Properties: %v", id, err)
				}
				if _, err := tpl.Resolve(r.Metadata, c); err != nil {
					broken(t, inv, "%s Metadata: %v", id, err)
				}
			}
			if _, err := tpl.Resolve(tpl.Globals, c); err != nil {
				broken(t, inv, "Globals: %v", err)
			}
			for name := range tpl.Conditions {
				if _, err := tpl.Resolve(samtemplate.Fn{Name: "Condition", Args: name}, c); err != nil {
					broken(t, inv, "condition %s: %v", name, err)
				}
			}
		})
	}
}

// builtinProviders are hookinbox's providers, in the registry's order.
func builtinProviders() []provider.Provider {
	reg, err := builtin.Registry()
	if err != nil {
		panic(err)
	}
	return reg.All()
}
