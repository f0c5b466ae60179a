package awsapi

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// MessageAttributeValue is an SQS message (or system) attribute.
type MessageAttributeValue struct {
	DataType    string // "String", "Number" or "Binary"
	StringValue string `json:",omitempty"`
	BinaryValue []byte `json:",omitempty"`
}

// SendMessageInput is SQS's SendMessage request.
type SendMessageInput struct {
	QueueUrl                string
	MessageBody             string                           // the body
	DelaySeconds            int32                            `json:",omitempty"`
	MessageAttributes       map[string]MessageAttributeValue `json:",omitempty"`
	MessageSystemAttributes map[string]MessageAttributeValue `json:",omitempty"`
}

// SendMessageOutput is SQS's SendMessage answer.
type SendMessageOutput struct {
	MessageId        string
	MD5OfMessageBody string
}

// ReceiveMessageInput is SQS's ReceiveMessage request.
type ReceiveMessageInput struct {
	QueueUrl                    string
	MaxNumberOfMessages         int32    `json:",omitempty"`
	VisibilityTimeout           int32    `json:",omitempty"`
	WaitTimeSeconds             int32    `json:",omitempty"`
	MessageAttributeNames       []string `json:",omitempty"`
	MessageSystemAttributeNames []string `json:",omitempty"`
	// AttributeNames is the older name of MessageSystemAttributeNames,
	// which local-aws-sqs reads.
	AttributeNames []string `json:",omitempty"`
}

// Message is a received SQS message.
type Message struct {
	MessageId         string
	ReceiptHandle     string
	Body              string
	MD5OfBody         string
	Attributes        map[string]string
	MessageAttributes map[string]MessageAttributeValue
}

// ReceiveMessageOutput is SQS's ReceiveMessage answer.
type ReceiveMessageOutput struct {
	Messages []Message
}

// DeleteMessageInput is SQS's DeleteMessage request.
type DeleteMessageInput struct {
	QueueUrl      string
	ReceiptHandle string
}

// ChangeMessageVisibilityInput is SQS's ChangeMessageVisibility request.
type ChangeMessageVisibilityInput struct {
	QueueUrl          string
	ReceiptHandle     string
	VisibilityTimeout int32
}

// StartMessageMoveTaskInput is SQS's StartMessageMoveTask request (a DLQ
// redrive).
type StartMessageMoveTaskInput struct {
	SourceArn      string
	DestinationArn string `json:",omitempty"`
}

// StartMessageMoveTaskOutput is SQS's StartMessageMoveTask answer.
type StartMessageMoveTaskOutput struct {
	TaskHandle string
}

// ListMessageMoveTasksInput is SQS's ListMessageMoveTasks request.
type ListMessageMoveTasksInput struct {
	SourceArn  string
	MaxResults int32 `json:",omitempty"`
}

// MessageMoveTask is one of SQS's message move tasks.
type MessageMoveTask struct {
	TaskHandle                        string
	Status                            string
	SourceArn                         string
	DestinationArn                    string
	ApproximateNumberOfMessagesMoved  int64
	ApproximateNumberOfMessagesToMove *int64
	FailureReason                     string
	StartedTimestamp                  int64
}

// ListMessageMoveTasksOutput is SQS's ListMessageMoveTasks answer.
type ListMessageMoveTasksOutput struct {
	Results []MessageMoveTask
}

// GetQueueAttributesInput is SQS's GetQueueAttributes request.
type GetQueueAttributesInput struct {
	QueueUrl       string
	AttributeNames []string
}

// GetQueueAttributesOutput is SQS's GetQueueAttributes answer.
type GetQueueAttributesOutput struct {
	Attributes map[string]string
}

// SQS makes the SQS operations hookinbox's queue package uses.
type SQS struct{ c *Client }

// NewSQS returns an SQS client on c, a Client for SQSService.
func NewSQS(c *Client) *SQS { return &SQS{c: c} }

// SQSFromConfig returns an SQS client configured from cfg as the SDK's
// would be (FromConfig).
func SQSFromConfig(cfg aws.Config) *SQS { return NewSQS(FromConfig(SQSService, cfg)) }

// SendMessage sends one message.
func (q *SQS) SendMessage(ctx context.Context, in *SendMessageInput) (*SendMessageOutput, error) {
	return call(ctx, q.c, "SendMessage", in, &SendMessageOutput{})
}

// ReceiveMessage receives up to MaxNumberOfMessages messages.
func (q *SQS) ReceiveMessage(ctx context.Context, in *ReceiveMessageInput) (*ReceiveMessageOutput, error) {
	return call(ctx, q.c, "ReceiveMessage", in, &ReceiveMessageOutput{})
}

// DeleteMessage deletes a received message.
func (q *SQS) DeleteMessage(ctx context.Context, in *DeleteMessageInput) error {
	return q.c.Call(ctx, "DeleteMessage", in, nil)
}

// ChangeMessageVisibility changes a received message's visibility timeout.
func (q *SQS) ChangeMessageVisibility(ctx context.Context, in *ChangeMessageVisibilityInput) error {
	return q.c.Call(ctx, "ChangeMessageVisibility", in, nil)
}

// StartMessageMoveTask starts a DLQ redrive.
func (q *SQS) StartMessageMoveTask(ctx context.Context, in *StartMessageMoveTaskInput) (*StartMessageMoveTaskOutput, error) {
	return call(ctx, q.c, "StartMessageMoveTask", in, &StartMessageMoveTaskOutput{})
}

// GetQueueAttributes reads a queue's attributes.
func (q *SQS) GetQueueAttributes(ctx context.Context, in *GetQueueAttributesInput) (*GetQueueAttributesOutput, error) {
	return call(ctx, q.c, "GetQueueAttributes", in, &GetQueueAttributesOutput{})
}

// ListMessageMoveTasks lists the recent redrives from a queue.
func (q *SQS) ListMessageMoveTasks(ctx context.Context, in *ListMessageMoveTasksInput) (*ListMessageMoveTasksOutput, error) {
	return call(ctx, q.c, "ListMessageMoveTasks", in, &ListMessageMoveTasksOutput{})
}
