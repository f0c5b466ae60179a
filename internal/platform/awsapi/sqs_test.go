package awsapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
)

func newClient(svc awsapi.Service, s *server) *awsapi.Client {
	return awsapi.New(svc, awsapi.Config{
		Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""),
		Endpoint: s.endpoint, Retryer: quickRetryer(3),
	})
}

func TestSQSSpeaksQueryCompatibleJSON(t *testing.T) {
	s := newServer(t, answer(200, `{"MessageId":"m1","MD5OfMessageBody":"x"}`))
	q := awsapi.NewSQS(newClient(awsapi.SQSService, s))
	out, err := q.SendMessage(context.Background(), &awsapi.SendMessageInput{
		QueueUrl: "http://q/events", MessageBody: `{"key":"stripe#evt_1"}`,
		MessageAttributes: map[string]awsapi.MessageAttributeValue{"event_type": {DataType: "String", StringValue: "a.b"}},
	})
	if err != nil || out.MessageId != "m1" {
		t.Fatalf("SendMessage = %+v, %v", out, err)
	}
	r := s.requests()[0]
	if r.header.Get("X-Amz-Target") != "AmazonSQS.SendMessage" || r.header.Get("X-Amzn-Query-Mode") != "true" ||
		r.header.Get("Content-Type") != "application/x-amz-json-1.0" {
		t.Errorf("headers = %v", r.header)
	}
	if _, ok := r.body["DelaySeconds"]; ok {
		t.Errorf("a zero DelaySeconds was sent: %v", r.body)
	}
	attrs, _ := r.body["MessageAttributes"].(map[string]any)
	if et, _ := attrs["event_type"].(map[string]any); et["DataType"] != "String" || et["StringValue"] != "a.b" {
		t.Errorf("MessageAttributes = %v", r.body["MessageAttributes"])
	}
}

func TestSQSErrorCodes(t *testing.T) {
	s := newServer(t, answer(400, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`,
		"X-Amzn-Query-Error", "AWS.SimpleQueueService.NonExistentQueue;Sender"))
	err := awsapi.NewSQS(newClient(awsapi.SQSService, s)).DeleteMessage(context.Background(), &awsapi.DeleteMessageInput{QueueUrl: "u", ReceiptHandle: "r"})
	var e *awsapi.Error
	if !errors.As(err, &e) || e.Code != "QueueDoesNotExist" || e.QueryCode != "AWS.SimpleQueueService.NonExistentQueue" || e.Service != "SQS" {
		t.Errorf("err = %#v", err)
	}
}

func TestSecretsManagerGetSecretValue(t *testing.T) {
	s := newServer(t, answer(200, `{"ARN":"arn:x","Name":"n","SecretString":"whsec_a,whsec_b","VersionId":"v1","CreatedDate":1.7e9}`))
	out, err := awsapi.NewSecretsManager(newClient(awsapi.SecretsManagerService, s)).GetSecretValue(context.Background(), &awsapi.GetSecretValueInput{SecretId: "arn:x"})
	if err != nil || out.SecretString == nil || *out.SecretString != "whsec_a,whsec_b" {
		t.Fatalf("GetSecretValue = %+v, %v", out, err)
	}
	r := s.requests()[0]
	if r.header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || r.header.Get("Content-Type") != "application/x-amz-json-1.1" || r.body["SecretId"] != "arn:x" {
		t.Errorf("request = %v %v", r.header, r.body)
	}
}
