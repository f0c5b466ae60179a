package devstack

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// queueAttributes are the AWS::SQS::Queue properties that are also
// CreateQueue attributes, under the same names.
var queueAttributes = []string{
	"ContentBasedDeduplication", "DeduplicationScope", "DelaySeconds", "FifoQueue",
	"FifoThroughputLimit", "MaximumMessageSize", "MessageRetentionPeriod",
	"ReceiveMessageWaitTimeSeconds", "RedriveAllowPolicy", "RedrivePolicy",
	"SqsManagedSseEnabled", "VisibilityTimeout",
}

// createQueue creates the queue with its attributes; RedrivePolicy and
// RedriveAllowPolicy, objects in a template, become JSON strings. KMS keys
// and queue policies are not applied.
func (s *Stack) createQueue(ctx context.Context, q *sqs.Client, id string) error {
	m, err := s.resolveProps(id, append([]string{"QueueName", "Tags"}, queueAttributes...)...)
	if err != nil {
		return err
	}
	attrs := map[string]string{}
	for _, a := range queueAttributes {
		v, ok := m[a]
		if !ok || v == nil {
			continue
		}
		str, err := attributeString(v)
		if err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
		attrs[a] = str
	}
	fifo := attrs["FifoQueue"] == "true"
	if !fifo {
		// Standard queues reject FifoQueue=false as well as true.
		delete(attrs, "FifoQueue")
	}
	name, _ := m["QueueName"].(string)
	if name == "" {
		name = s.defaultName(id)
		if fifo {
			name += ".fifo"
		}
	}
	in := &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs}
	if tags, ok := m["Tags"].([]any); ok {
		in.Tags = map[string]string{}
		for _, t := range tags {
			if kv, ok := t.(map[string]any); ok {
				k, _ := attributeString(kv["Key"])
				v, _ := attributeString(kv["Value"])
				in.Tags[k] = v
			}
		}
	}
	out, err := q.CreateQueue(ctx, in)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	ga, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		// Record the queue so that Delete removes it.
		s.Queues[id] = Queue{Name: name, URL: aws.ToString(out.QueueUrl)}
		return fmt.Errorf("get ARN of %s: %w", name, err)
	}
	s.Queues[id] = Queue{Name: name, URL: aws.ToString(out.QueueUrl), ARN: ga.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]}
	return nil
}

// queueOrder sorts ids so that every queue comes after the queues its
// properties refer to (RedrivePolicy's deadLetterTargetArn, usually).
func (s *Stack) queueOrder(ids []string) ([]string, error) {
	in := map[string]bool{}
	for _, id := range ids {
		in[id] = true
	}
	deps := map[string][]string{}
	for _, id := range ids {
		// A dry run with a recording Lookup finds every resource the
		// properties refer to, whatever the intrinsic (Ref, GetAtt, Sub).
		seen := map[string]bool{}
		c := s.Context()
		c.Lookup = func(ref, attr string) (string, error) {
			seen[ref] = true
			return "x", nil
		}
		_, _ = s.Template.Resolve(s.Template.Resources[id].Properties, c)
		for ref := range seen {
			if in[ref] && ref != id {
				deps[id] = append(deps[id], ref)
			}
		}
	}
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(id string, path []string) error
	visit = func(id string, path []string) error {
		switch state[id] {
		case 1:
			return fmt.Errorf("queues refer to each other: %s", strings.Join(append(path, id), " → "))
		case 2:
			return nil
		}
		state[id] = 1
		sort.Strings(deps[id])
		for _, d := range deps[id] {
			if err := visit(d, append(path, id)); err != nil {
				return err
			}
		}
		state[id] = 2
		order = append(order, id)
		return nil
	}
	for _, id := range ids {
		if err := visit(id, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// attributeString formats a resolved template value as an SQS attribute:
// strings as they are, numbers and booleans formatted, objects and lists as
// JSON.
func attributeString(v any) (string, error) {
	switch v.(type) {
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	s, err := samtemplate.ScalarString(v)
	if err != nil {
		return "", fmt.Errorf("queue attribute: %w", err)
	}
	return s, nil
}
