package devstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// inlineTemplate has what CreateStack must handle: a table with a GSI and
// TTL, a FIFO queue without a name, and a queue whose DLQ is declared after
// it.
const inlineTemplate = `
Parameters:
  Suffix:
    Type: String
    Default: items
Conditions:
  Never: !Equals [a, b]
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Handler: bootstrap
      Environment:
        Variables:
          TABLE: !Ref Items
          TABLE_ARN: !GetAtt Items.Arn
          QUEUE_URL: !Ref Work
          DLQ_NAME: !GetAtt WorkDLQ.QueueName
          SELF: !Ref Fn
  Items:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${AWS::StackName}-${Suffix}"
      AttributeDefinitions:
        - {AttributeName: pk, AttributeType: S}
        - {AttributeName: sk, AttributeType: S}
        - {AttributeName: status, AttributeType: S}
      KeySchema:
        - {AttributeName: pk, KeyType: HASH}
        - {AttributeName: sk, KeyType: RANGE}
      GlobalSecondaryIndexes:
        - IndexName: by-status
          KeySchema:
            - {AttributeName: status, KeyType: HASH}
          Projection:
            ProjectionType: INCLUDE
            NonKeyAttributes: [note]
      BillingMode: PAY_PER_REQUEST
      TimeToLiveSpecification:
        AttributeName: expires_at
        Enabled: true
  Skipped:
    Type: AWS::DynamoDB::Table
    Condition: Never
    Properties:
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
      AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
  Work:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub "${AWS::StackName}-work"
      VisibilityTimeout: 30
      MessageRetentionPeriod: 3600
      ReceiveMessageWaitTimeSeconds: 0
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt WorkDLQ.Arn
        maxReceiveCount: 2
  WorkDLQ:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub "${AWS::StackName}-work-dlq"
      RedriveAllowPolicy:
        redrivePermission: byQueue
        sourceQueueArns:
          - !Sub "arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:${AWS::StackName}-work"
  Ordered:
    Type: AWS::SQS::Queue
    Properties:
      FifoQueue: true
      ContentBasedDeduplication: true
`

func parseInline(t *testing.T) *samtemplate.Template {
	t.Helper()
	tpl, err := samtemplate.Parse([]byte(inlineTemplate))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// newTestStack is devstacktest.newTestStackFrom on forTest's emulators.
func newTestStack(t *testing.T, tpl *samtemplate.Template) *Stack {
	t.Helper()
	s, err := forTest(t).CreateStack(context.Background(), tpl, UniqueStackName())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Delete(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestCreateStackInline(t *testing.T) {
	e := forTest(t)
	s := newTestStack(t, parseInline(t))
	ctx := context.Background()

	if got, want := s.Tables, map[string]string{"Items": s.Name + "-items"}; !cmp.Equal(got, want) {
		t.Errorf("Tables: %v", cmp.Diff(want, got))
	}
	for id, want := range map[string]string{"Work": s.Name + "-work", "WorkDLQ": s.Name + "-work-dlq", "Ordered": s.Name + "-Ordered.fifo"} {
		q := s.Queues[id]
		if q.Name != want {
			t.Errorf("Queues[%s].Name = %q, want %q", id, q.Name, want)
		}
		if !strings.HasPrefix(q.URL, e.SQSURL+"/") || !strings.HasSuffix(q.URL, "/"+want) {
			t.Errorf("Queues[%s].URL = %q, want %s/.../%s", id, q.URL, e.SQSURL, want)
		}
		if !strings.HasSuffix(q.ARN, ":"+want) {
			t.Errorf("Queues[%s].ARN = %q", id, q.ARN)
		}
	}

	env, err := s.FunctionEnv("Fn")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"TABLE":     s.Name + "-items",
		"TABLE_ARN": "arn:aws:dynamodb:us-east-1:123456789012:table/" + s.Name + "-items",
		"QUEUE_URL": s.Queues["Work"].URL,
		"DLQ_NAME":  s.Name + "-work-dlq",
		"SELF":      "Fn",
	}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("FunctionEnv (-want +got):\n%s", diff)
	}

	t.Run("table", func(t *testing.T) {
		db := e.DynamoDB()
		table := aws.String(s.Tables["Items"])
		item := map[string]dbtypes.AttributeValue{
			"pk":     &dbtypes.AttributeValueMemberS{Value: "stripe#evt_1"},
			"sk":     &dbtypes.AttributeValueMemberS{Value: "status"},
			"status": &dbtypes.AttributeValueMemberS{Value: "RECEIVED"},
			"note":   &dbtypes.AttributeValueMemberS{Value: "hello"},
		}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item,
			ConditionExpression: aws.String("attribute_not_exists(pk)")}); err != nil {
			t.Fatal(err)
		}
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item,
			ConditionExpression: aws.String("attribute_not_exists(pk)")})
		var ccf *dbtypes.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			t.Errorf("second conditional PutItem: %v, want ConditionalCheckFailedException", err)
		}
		got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: map[string]dbtypes.AttributeValue{
			"pk": item["pk"], "sk": item["sk"]}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := got.Item["note"].(*dbtypes.AttributeValueMemberS); v == nil || v.Value != "hello" {
			t.Errorf("GetItem note = %#v, want hello", got.Item["note"])
		}
		q, err := db.Query(ctx, &dynamodb.QueryInput{TableName: table, IndexName: aws.String("by-status"),
			KeyConditionExpression:    aws.String("#s = :s"),
			ExpressionAttributeNames:  map[string]string{"#s": "status"},
			ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":s": &dbtypes.AttributeValueMemberS{Value: "RECEIVED"}}})
		if err != nil {
			t.Fatal(err)
		}
		if q.Count != 1 {
			t.Errorf("Query by-status: %d items, want 1", q.Count)
		}
	})

	t.Run("queue", func(t *testing.T) {
		c := e.SQS()
		work, dlq := s.Queues["Work"], s.Queues["WorkDLQ"]
		attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &work.URL,
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		var rp struct {
			DeadLetterTargetArn string `json:"deadLetterTargetArn"`
			MaxReceiveCount     any    `json:"maxReceiveCount"`
		}
		if err := json.Unmarshal([]byte(attrs.Attributes["RedrivePolicy"]), &rp); err != nil || rp.DeadLetterTargetArn != dlq.ARN {
			t.Errorf("RedrivePolicy = %s (%v), want deadLetterTargetArn %s", attrs.Attributes["RedrivePolicy"], err, dlq.ARN)
		}
		if got := attrs.Attributes["VisibilityTimeout"]; got != "30" {
			t.Errorf("VisibilityTimeout = %s, want 30", got)
		}

		// With a visibility timeout of 0 every receive makes the message
		// visible again at once; maxReceiveCount is 2, so after two
		// receives it moves to the DLQ.
		if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &work.URL,
			Attributes: map[string]string{"VisibilityTimeout": "0"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &work.URL, MessageBody: aws.String("stripe#evt_1")}); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 2; i++ {
			m := receiveWithin(t, c, work.URL, 2*time.Second)
			if m == nil {
				t.Fatalf("receive %d: no message", i)
			}
			if got, want := m.Attributes["ApproximateReceiveCount"], fmt.Sprint(i); got != want {
				t.Errorf("receive %d: ApproximateReceiveCount = %s, want %s", i, got, want)
			}
		}
		m := receiveWithin(t, c, dlq.URL, 2*time.Second)
		if m == nil || aws.ToString(m.Body) != "stripe#evt_1" {
			t.Fatalf("DLQ receive: %v, want the message", m)
		}
		if m := receiveOne(t, c, work.URL); m != nil {
			t.Fatalf("source queue still has %q after maxReceiveCount receives", aws.ToString(m.Body))
		}
		if _, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &dlq.URL,
			ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
			t.Fatal(err)
		}

		// The console's "Start DLQ redrive": back to the source queue.
		if _, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: &dlq.ARN}); err != nil {
			t.Fatalf("StartMessageMoveTask: %v", err)
		}
		back := receiveWithin(t, c, work.URL, 5*time.Second)
		if back == nil || aws.ToString(back.Body) != "stripe#evt_1" {
			t.Fatalf("after StartMessageMoveTask the source queue has %v, want the message", back)
		}
		tasks, err := c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &dlq.ARN})
		if err != nil {
			t.Fatalf("ListMessageMoveTasks: %v", err)
		}
		if len(tasks.Results) == 0 {
			t.Errorf("ListMessageMoveTasks: no tasks")
		}
	})

	t.Run("delete", func(t *testing.T) {
		s2, err := e.CreateStack(ctx, parseInline(t), UniqueStackName())
		if err != nil {
			t.Fatal(err)
		}
		if err := s2.Delete(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = e.DynamoDB().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s2.Tables["Items"])})
		var nf *dbtypes.ResourceNotFoundException
		if !errors.As(err, &nf) {
			t.Errorf("DescribeTable after Delete: %v, want ResourceNotFoundException", err)
		}
		_, err = e.SQS().GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(s2.Queues["Work"].Name)})
		if err == nil {
			t.Errorf("GetQueueUrl after Delete succeeded")
		}
		if err := s2.Delete(ctx); err != nil {
			t.Errorf("second Delete: %v", err)
		}
	})
}

func TestCreateStackFromTemplate(t *testing.T) {
	tpl, err := RootTemplate()
	if err != nil {
		t.Fatal(err)
	}
	s := newTestStack(t, tpl)
	ctx := context.Background()
	e := forTest(t)

	if got, want := s.Tables["InboxTable"], s.Name+"-inbox"; got != want {
		t.Errorf("InboxTable = %q, want %q", got, want)
	}
	events, dlq := s.Queues["EventsQueue"], s.Queues["EventsDLQ"]
	if events.URL == "" || dlq.URL == "" {
		t.Fatalf("Queues = %v, want EventsQueue and EventsDLQ", s.Queues)
	}
	attrs, err := e.SQS().GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &events.URL,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	if rp := attrs.Attributes["RedrivePolicy"]; !strings.Contains(rp, dlq.ARN) {
		t.Errorf("EventsQueue RedrivePolicy = %s, want it to name %s", rp, dlq.ARN)
	}
	for _, id := range s.Template.ByType("AWS::Serverless::Function") {
		env, err := s.FunctionEnv(id)
		if err != nil {
			t.Errorf("FunctionEnv(%s): %v", id, err)
			continue
		}
		if v, ok := env["INBOX_TABLE"]; ok && v != s.Tables["InboxTable"] {
			t.Errorf("%s: INBOX_TABLE = %q, want %q", id, v, s.Tables["InboxTable"])
		}
		if v, ok := env["EVENTS_QUEUE_URL"]; ok && v != events.URL {
			t.Errorf("%s: EVENTS_QUEUE_URL = %q, want %q", id, v, events.URL)
		}
	}
	if _, err := e.DynamoDB().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Tables["InboxTable"]),
		Item: map[string]dbtypes.AttributeValue{
			"pk": &dbtypes.AttributeValueMemberS{Value: "stripe#evt_1"},
			"sk": &dbtypes.AttributeValueMemberS{Value: "event"},
		}}); err != nil {
		t.Error(err)
	}
}

func TestQueueOrder(t *testing.T) {
	tests := []struct {
		name    string
		tpl     string
		want    []string
		wantErr string
	}{
		{
			name: "dlq first",
			tpl: `
Resources:
  A:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy: {deadLetterTargetArn: !GetAtt Z.Arn, maxReceiveCount: 5}
  Z:
    Type: AWS::SQS::Queue
  M:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy: {deadLetterTargetArn: !Sub "${A.Arn}", maxReceiveCount: 5}
`,
			want: []string{"Z", "A", "M"},
		},
		{
			name: "cycle",
			tpl: `
Resources:
  A:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy: {deadLetterTargetArn: !GetAtt B.Arn}
  B:
    Type: AWS::SQS::Queue
    Properties:
      RedriveAllowPolicy: {redrivePermission: byQueue, sourceQueueArns: [!GetAtt A.Arn]}
`,
			wantErr: "refer to each other",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := samtemplate.Parse([]byte(tt.tpl))
			if err != nil {
				t.Fatal(err)
			}
			s := &Stack{Name: "s", Template: tpl, Tables: map[string]string{}, Queues: map[string]Queue{}}
			got, err := s.queueOrder(tpl.ByType(queueType))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("queueOrder = %v, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("queueOrder (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAttributeString(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"string", "30", "30"},
		{"int", 30, "30"},
		{"float", float64(1209600), "1209600"},
		{"bool", true, "true"},
		{"object", map[string]any{"maxReceiveCount": 5, "deadLetterTargetArn": "arn"}, `{"deadLetterTargetArn":"arn","maxReceiveCount":5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := attributeString(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("attributeString(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
