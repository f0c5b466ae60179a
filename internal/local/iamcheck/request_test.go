package iamcheck

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"
)

var testPlace = Place{
	Region: "us-east-1", AccountID: "123456789012",
	PartitionKey: func(table, index string) string {
		if index == "pending" {
			return "pending"
		}
		return "pk"
	},
}

// wire returns the accesses of the one request call makes with a real
// SDK client configured by cfg, as the recording proxy sees it.
func wire(t *testing.T, call func(cfg aws.Config)) []Access {
	t.Helper()
	var got []Access
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var err error
		if got, err = testPlace.Request(r, body); err != nil {
			t.Errorf("Request: %v", err)
		}
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	cfg := aws.Config{
		Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(AccessKeyID("Fn"), "secret", ""),
		BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1,
	}
	call(cfg)
	return got
}

func TestRequestFromTheSDK(t *testing.T) {
	ctx := context.Background()
	s := aws.String
	key := map[string]dbtypes.AttributeValue{"pk": &dbtypes.AttributeValueMemberS{Value: "stripe#evt_1"}, "sk": &dbtypes.AttributeValueMemberS{Value: "payload"}}
	queueURL := "http://127.0.0.1:1/123456789012/s-events"
	tests := []struct {
		name string
		call func(aws.Config)
		want []Access
	}{
		{"GetItem", func(c aws.Config) {
			dynamodb.NewFromConfig(c).GetItem(ctx, &dynamodb.GetItemInput{TableName: s("s-inbox"), Key: key})
		}, []Access{{Action: "dynamodb:GetItem", Resources: []string{table}, LeadingKeys: []string{"stripe#evt_1"}}}},
		{"Query on the table", func(c aws.Config) {
			dynamodb.NewFromConfig(c).Query(ctx, &dynamodb.QueryInput{
				TableName: s("s-inbox"), KeyConditionExpression: s("#pk = :pk AND begins_with(sk, :p)"),
				ExpressionAttributeNames:  map[string]string{"#pk": "pk"},
				ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":pk": &dbtypes.AttributeValueMemberS{Value: "watch#gopay"}, ":p": &dbtypes.AttributeValueMemberS{Value: "x"}},
			})
		}, []Access{{Action: "dynamodb:Query", Resources: []string{table}, LeadingKeys: []string{"watch#gopay"}}}},
		{"Query on an index", func(c aws.Config) {
			dynamodb.NewFromConfig(c).Query(ctx, &dynamodb.QueryInput{
				TableName: s("s-inbox"), IndexName: s("pending"), KeyConditionExpression: s("pending = :p"),
				ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":p": &dbtypes.AttributeValueMemberN{Value: "1"}},
			})
		}, []Access{{Action: "dynamodb:Query", Resources: []string{table + "/index/pending"}, LeadingKeys: []string{"1"}}}},
		{"TransactWriteItems", func(c aws.Config) {
			dynamodb.NewFromConfig(c).TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []dbtypes.TransactWriteItem{
				{Put: &dbtypes.Put{TableName: s("s-inbox"), Item: key}},
				{Delete: &dbtypes.Delete{TableName: s("s-shop"), Key: key}},
			}})
		}, []Access{
			{Action: "dynamodb:PutItem", Resources: []string{table}, LeadingKeys: []string{"stripe#evt_1"}},
			{Action: "dynamodb:DeleteItem", Resources: []string{"arn:aws:dynamodb:us-east-1:123456789012:table/s-shop"}, LeadingKeys: []string{"stripe#evt_1"}},
		}},
		{"SendMessageBatch", func(c aws.Config) {
			sqs.NewFromConfig(c).SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: s(queueURL), Entries: []sqstypes.SendMessageBatchRequestEntry{{Id: s("1"), MessageBody: s("{}")}}})
		}, []Access{{Action: "sqs:SendMessage", Resources: []string{queue}}}},
		{"ChangeMessageVisibility", func(c aws.Config) {
			sqs.NewFromConfig(c).ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: s(queueURL), ReceiptHandle: s("r")})
		}, []Access{{Action: "sqs:ChangeMessageVisibility", Resources: []string{queue}}}},
		{"GetSecretValue by ARN", func(c aws.Config) {
			secretsmanager.NewFromConfig(c).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: s("arn:aws:secretsmanager:us-east-1:123456789012:secret:k-AbCdEf")})
		}, []Access{{Action: "secretsmanager:GetSecretValue", Resources: []string{"arn:aws:secretsmanager:us-east-1:123456789012:secret:k-AbCdEf"}}}},
		{"SES v2 SendEmail", func(c aws.Config) {
			sesv2.NewFromConfig(c).SendEmail(ctx, &sesv2.SendEmailInput{
				FromEmailAddress: s("Shop <shop@example.com>"), ConfigurationSetName: s("cs"),
				Content: &sestypes.EmailContent{Simple: &sestypes.Message{Subject: &sestypes.Content{Data: s("hi")}, Body: &sestypes.Body{Text: &sestypes.Content{Data: s("hi")}}}},
			})
		}, []Access{
			{Action: "ses:SendEmail", Resources: []string{"arn:aws:ses:us-east-1:123456789012:identity/shop@example.com", "arn:aws:ses:us-east-1:123456789012:identity/example.com"}},
			{Action: "ses:SendEmail", Resources: []string{"arn:aws:ses:us-east-1:123456789012:configuration-set/cs"}},
		}},
		{"PutMetricData", func(c aws.Config) {
			cloudwatch.NewFromConfig(c).PutMetricData(ctx, &cloudwatch.PutMetricDataInput{Namespace: s("n"), MetricData: []cwtypes.MetricDatum{{MetricName: s("m"), Value: aws.Float64(1)}}})
		}, []Access{{Action: "cloudwatch:PutMetricData", Resources: []string{"*"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(wire(t, tt.call), tt.want); diff != "" {
				t.Errorf("accesses (-got +want):\n%s", diff)
			}
		})
	}
}

// signed returns a request signed (in form) by function fn for service.
func signed(method, target, service, body string, header map[string]string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+AccessKeyID("Fn")+"/20261202/us-east-1/"+service+"/aws4_request, SignedHeaders=host, Signature=00")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	return r
}

// Services without a client in go.mod: the wire forms from their API
// references (S3 path style, EventBridge JSON, SQS query protocol).
func TestRequestByHand(t *testing.T) {
	object := "arn:aws:s3:::bodies/inbox/stripe#evt_1"
	tests := []struct {
		name string
		req  *http.Request
		want []Access
	}{
		{"S3 PutObject", signed("PUT", "/bodies/inbox/stripe%23evt_1", "s3", "x", nil), []Access{{Action: "s3:PutObject", Resources: []string{object}}}},
		{"S3 GetObject", signed("GET", "/bodies/inbox/a/b?x-id=GetObject", "s3", "", nil), []Access{{Action: "s3:GetObject", Resources: []string{"arn:aws:s3:::bodies/inbox/a/b"}}}},
		{"S3 HeadObject", signed("HEAD", "/bodies/inbox/a", "s3", "", nil), []Access{{Action: "s3:GetObject", Resources: []string{"arn:aws:s3:::bodies/inbox/a"}}}},
		{"S3 DeleteObject", signed("DELETE", "/bodies/inbox/a?x-id=DeleteObject", "s3", "", nil), []Access{{Action: "s3:DeleteObject", Resources: []string{"arn:aws:s3:::bodies/inbox/a"}}}},
		{"S3 DeleteObjects", signed("POST", "/bodies?delete", "s3", "<Delete><Object><Key>inbox/a</Key></Object><Object><Key>inbox/b</Key></Object></Delete>", nil), []Access{
			{Action: "s3:DeleteObject", Resources: []string{"arn:aws:s3:::bodies/inbox/a"}},
			{Action: "s3:DeleteObject", Resources: []string{"arn:aws:s3:::bodies/inbox/b"}},
		}},
		{"S3 ListObjectsV2", signed("GET", "/bodies?list-type=2&prefix=inbox/", "s3", "", nil), []Access{{Action: "s3:ListBucket", Resources: []string{"arn:aws:s3:::bodies"}}}},
		{"S3 CopyObject", signed("PUT", "/bodies/inbox/b", "s3", "", map[string]string{"X-Amz-Copy-Source": "/bodies/inbox/a"}), []Access{
			{Action: "s3:PutObject", Resources: []string{"arn:aws:s3:::bodies/inbox/b"}},
			{Action: "s3:GetObject", Resources: []string{"arn:aws:s3:::bodies/inbox/a"}},
		}},
		{"EventBridge PutEvents", signed("POST", "/", "events", `{"Entries":[{"EventBusName":"orders"},{"EventBusName":"orders"},{}]}`, map[string]string{"X-Amz-Target": "AWSEvents.PutEvents"}), []Access{
			{Action: "events:PutEvents", Resources: []string{"arn:aws:events:us-east-1:123456789012:event-bus/orders"}},
			{Action: "events:PutEvents", Resources: []string{"arn:aws:events:us-east-1:123456789012:event-bus/default"}},
		}},
		{"SQS query protocol", signed("POST", "/123456789012/s-events", "sqs", "Action=DeleteMessage&ReceiptHandle=r", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}), []Access{{Action: "sqs:DeleteMessage", Resources: []string{queue}}}},
		{"secret by name", signed("POST", "/", "secretsmanager", `{"SecretId":"k"}`, map[string]string{"X-Amz-Target": "secretsmanager.GetSecretValue"}), []Access{{Action: "secretsmanager:GetSecretValue", Resources: []string{"arn:aws:secretsmanager:us-east-1:123456789012:secret:k-??????"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := io.ReadAll(tt.req.Body)
			got, err := testPlace.Request(tt.req, body)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("accesses (-got +want):\n%s", diff)
			}
		})
	}
}

// A request the check cannot map is an error, so nothing passes unchecked.
func TestRequestUnmapped(t *testing.T) {
	for name, r := range map[string]*http.Request{
		"unknown service": signed("POST", "/", "kinesis", "{}", map[string]string{"X-Amz-Target": "Kinesis_20131202.PutRecord"}),
		"unsigned":        httptest.NewRequest("POST", "/", bytes.NewReader(nil)),
		"SES v2 route":    signed("GET", "/v2/email/identities", "ses", "", nil),
	} {
		if _, err := testPlace.Request(r, nil); err == nil {
			t.Errorf("%s: Request mapped it", name)
		}
	}
}
