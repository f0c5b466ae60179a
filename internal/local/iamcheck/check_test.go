package iamcheck

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// A translated template in small: a generated role with a policy
// template's statement and a conditional secret, an exemption, and a
// function that exists only with a parameter set.
const checkTemplate = `
Parameters:
  SecretArn: {Type: String, Default: ""}
  Extra: {Type: String, Default: ""}
Conditions:
  HasSecret: !Not [!Equals [!Ref SecretArn, ""]]
  HasExtra: !Not [!Equals [!Ref Extra, ""]]
Resources:
  Queue: {Type: AWS::SQS::Queue}
  DLQ: {Type: AWS::SQS::Queue}
  Fn:
    Type: AWS::Lambda::Function
    Metadata:
      UnexercisedGrants:
        - Action: sqs:SendMessage
          Resource: !GetAtt DLQ.Arn
          Why: Lambda sends a failed asynchronous invocation there.
    Properties:
      Role: !GetAtt FnRole.Arn
  FnRole:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: DeadLetterQueuePolicy
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: sqs:SendMessage
                Resource: !GetAtt DLQ.Arn
        - PolicyName: FnRolePolicy0
          PolicyDocument:
            Statement:
              - Sid: Enqueue
                Effect: Allow
                Action: [sqs:SendMessage, sqs:GetQueueUrl]
                Resource: !GetAtt Queue.Arn
              - !If
                - HasSecret
                - Sid: SecretRead
                  Effect: Allow
                  Action: secretsmanager:GetSecretValue
                  Resource: !Ref SecretArn
                - !Ref AWS::NoValue
  ExtraFn:
    Type: AWS::Lambda::Function
    Condition: HasExtra
    Properties:
      Role: !GetAtt ExtraFnRole.Arn
  ExtraFnRole:
    Type: AWS::IAM::Role
    Condition: HasExtra
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: sqs:SendMessage
                Resource: !GetAtt Queue.Arn
`

func checkStack(params map[string]string) Stack {
	return Stack{
		Name: "s", Test: "TestX", Region: "us-east-1", AccountID: "123456789012", Params: params,
		Resources: map[string]map[string]string{
			"Queue": {"Arn": queue, "": "http://127.0.0.1:1/123456789012/s-events"},
			"DLQ":   {"Arn": "arn:aws:sqs:us-east-1:123456789012:s-dlq"},
		},
	}
}

const secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:k-AbCdEf"

func sends(fn, q string) Call {
	return Call{Function: fn, Access: []Access{{Action: "sqs:SendMessage", Resources: []string{q}}}}
}

func TestCheck(t *testing.T) {
	tpl, err := samtemplate.Parse([]byte(checkTemplate))
	if err != nil {
		t.Fatal(err)
	}
	getURL := Call{Function: "Fn", Access: []Access{{Action: "sqs:GetQueueUrl", Resources: []string{queue}}}}
	readSecret := Call{Function: "Fn", Access: []Access{{Action: "secretsmanager:GetSecretValue", Resources: []string{secret}}}}
	withSecret := map[string]string{"SecretArn": secret, "Extra": "on"}
	tests := []struct {
		name string
		recs []Recorded
		want []string // substrings of the report, in order; none for a pass
	}{
		{"every grant used", []Recorded{
			{Stack: checkStack(nil), Calls: []Call{sends("Fn", queue), getURL}},
			{Stack: checkStack(withSecret), Calls: []Call{readSecret, sends("ExtraFn", queue)}},
		}, nil},
		{"refused: another queue", []Recorded{
			{Stack: checkStack(nil), Calls: []Call{sends("Fn", queue), getURL, sends("Fn", "arn:aws:sqs:us-east-1:123456789012:s-other")}},
			{Stack: checkStack(withSecret), Calls: []Call{readSecret, sends("ExtraFn", queue)}},
		}, []string{"TestX (stack s): Fn may not sqs:SendMessage on arn:aws:sqs:us-east-1:123456789012:s-other: Fn's role FnRole refuses it"}},
		{"refused: the secret read where the parameter is not set", []Recorded{
			{Stack: checkStack(nil), Calls: []Call{sends("Fn", queue), getURL, readSecret}},
			{Stack: checkStack(withSecret), Calls: []Call{readSecret, sends("ExtraFn", queue)}},
		}, []string{"Fn may not secretsmanager:GetSecretValue on " + secret}},
		{"refused: a function the deployment does not have", []Recorded{
			{Stack: checkStack(nil), Calls: []Call{sends("Fn", queue), getURL, sends("ExtraFn", queue)}},
			{Stack: checkStack(withSecret), Calls: []Call{readSecret, sends("ExtraFn", queue)}},
		}, []string{"ExtraFn is not a function of the template in this deployment"}},
		{"unused: an optional statement no test switched on", []Recorded{
			{Stack: checkStack(nil), Calls: []Call{sends("Fn", queue), getURL}},
		}, []string{"ExtraFn's role grants sqs:SendMessage", "Fn's role grants secretsmanager:GetSecretValue (FnRole policy FnRolePolicy0 statement 1 (SecretRead))"}},
		{"unmapped request", []Recorded{
			{Stack: checkStack(nil), Calls: []Call{sends("Fn", queue), getURL, {Function: "Fn", Error: "service kinesis is not mapped"}}},
			{Stack: checkStack(withSecret), Calls: []Call{readSecret, sends("ExtraFn", queue)}},
		}, []string{"Fn made a request the check cannot map: service kinesis is not mapped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Check(tpl, tt.recs)
			got := rep.String()
			if len(tt.want) == 0 && !rep.OK() {
				t.Errorf("Check reports:\n%s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Check does not say %q:\n%s", w, got)
				}
			}
		})
	}
}

// Removing any one action entry, the exempted one included, fails the
// check on records that pass it.
func TestWithoutEachGrantFails(t *testing.T) {
	tpl, err := samtemplate.Parse([]byte(checkTemplate))
	if err != nil {
		t.Fatal(err)
	}
	recs := []Recorded{
		{Stack: checkStack(nil), Calls: []Call{sends("Fn", queue), {Function: "Fn", Access: []Access{{Action: "sqs:GetQueueUrl", Resources: []string{queue}}}}}},
		{Stack: checkStack(map[string]string{"SecretArn": secret, "Extra": "on"}), Calls: []Call{
			{Function: "Fn", Access: []Access{{Action: "secretsmanager:GetSecretValue", Resources: []string{secret}}}}, sends("ExtraFn", queue),
		}},
	}
	rep := Check(tpl, recs)
	if !rep.OK() {
		t.Fatalf("Check reports:\n%s", rep)
	}
	var got []string
	for _, g := range rep.Grants {
		if Without(tpl, recs, g).OK() {
			t.Errorf("without %s the check passes", g)
		}
		got = append(got, g.Function+" "+g.Action)
	}
	if len(got) != 5 {
		t.Errorf("grants = %v, want the 5 action entries of the two roles", got)
	}
}

// The recording proxy attributes a real SDK request to the function whose
// access key ID signed it, and passes it on; the test's own requests are
// not recorded.
func TestRecorderAttributesByAccessKey(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(dir, checkStack(nil), testPlace, []string{"Fn"})
	if err != nil {
		t.Fatal(err)
	}
	var forwarded atomic.Int32
	upstream := httpServer(t, func() { forwarded.Add(1) })
	front, err := rec.Front(upstream)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{AccessKeyID("Fn"), "harness"} {
		client := sqs.NewFromConfig(aws.Config{
			Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(key, "secret", ""),
			BaseEndpoint: aws.String(front), RetryMaxAttempts: 1,
		})
		client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String("http://127.0.0.1:1/123456789012/s-events"), MessageBody: aws.String("{}")})
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := forwarded.Load(); n != 2 {
		t.Errorf("upstream got %d requests, want 2", n)
	}
	if len(recs) != 1 || len(recs[0].Calls) != 1 || recs[0].Calls[0].Function != "Fn" || recs[0].Calls[0].Access[0].String() != "sqs:SendMessage on "+queue {
		t.Errorf("records = %+v, want Fn's one SendMessage on %s", recs, queue)
	}
}

func httpServer(t *testing.T, hit func()) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Write([]byte(`{"MessageId":"m","MD5OfMessageBody":"99914b932bd37a50b983c5e7c90ae93b"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
