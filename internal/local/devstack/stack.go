package devstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// Resource types CreateStack creates.
const (
	tableType = "AWS::DynamoDB::Table"
	queueType = "AWS::SQS::Queue"
)

// Queue is an SQS queue created for a Stack.
type Queue struct {
	Name, URL, ARN string
}

// Stack is the template's tables and queues created on the emulators under
// one stack name. CreateStack fills it; it is safe for concurrent reads
// afterwards.
type Stack struct {
	Name     string
	Template *samtemplate.Template
	Tables   map[string]string // logical ID → table name
	Queues   map[string]Queue  // logical ID → queue
	Buckets  map[string]string // logical ID → bucket name
	// Params are the stack's parameter values, over the template's
	// defaults: a parameter with no default needs one (CreateStackWith).
	Params map[string]string

	emu *Emulators
}

// CreateStack creates every AWS::DynamoDB::Table, AWS::SQS::Queue and
// AWS::S3::Bucket (when e has an S3 endpoint) of tpl on e, with names resolved as CloudFormation would for a stack named
// stackName (a resource without a name gets "<stackName>-<LogicalID>").
// Resources whose Condition is false are skipped. Queues are created in
// dependency order, so a dead-letter queue exists before the queue whose
// RedrivePolicy points at it. It returns once every table is ACTIVE. On error
// it deletes what it created.
func (e *Emulators) CreateStack(ctx context.Context, tpl *samtemplate.Template, stackName string) (*Stack, error) {
	return e.CreateStackWith(ctx, tpl, stackName, nil)
}

// CreateStackWith is CreateStack with the template's parameter values
// params (Stack.Params), which the names and the functions' environment
// resolve with.
func (e *Emulators) CreateStackWith(ctx context.Context, tpl *samtemplate.Template, stackName string, params map[string]string) (*Stack, error) {
	if tpl == nil {
		return nil, errors.New("create stack: nil template")
	}
	s := &Stack{
		Name:     stackName,
		Template: tpl,
		Tables:   map[string]string{},
		Queues:   map[string]Queue{},
		Buckets:  map[string]string{},
		Params:   params,
		emu:      e,
	}
	if err := s.create(ctx); err != nil {
		if derr := s.Delete(context.WithoutCancel(ctx)); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, fmt.Errorf("create stack %s: %w", stackName, err)
	}
	return s, nil
}

// create creates the stack's tables, queues and buckets, and waits for
// its tables to be ACTIVE.
func (s *Stack) create(ctx context.Context) error {
	tables, err := s.Included(tableType)
	if err != nil {
		return err
	}
	db := s.emu.DynamoDB()
	for _, id := range tables {
		if err := s.createTable(ctx, db, id); err != nil {
			return fmt.Errorf("table %s: %w", id, err)
		}
	}
	if err := s.createQueues(ctx); err != nil {
		return err
	}
	if err := s.createBuckets(ctx); err != nil {
		return err
	}
	for _, id := range tables {
		if err := waitTableActive(ctx, db, s.Tables[id]); err != nil {
			return fmt.Errorf("table %s: %w", id, err)
		}
	}
	return nil
}

// createQueues creates the stack's queues, each after the queues it
// names.
func (s *Stack) createQueues(ctx context.Context) error {
	queues, err := s.Included(queueType)
	if err != nil {
		return err
	}
	queues, err = s.queueOrder(queues)
	if err != nil {
		return err
	}
	q := s.emu.SQS()
	for _, id := range queues {
		if err := s.createQueue(ctx, q, id); err != nil {
			return fmt.Errorf("queue %s: %w", id, err)
		}
	}
	return nil
}

// createBuckets creates the stack's buckets when the emulators serve S3.
func (s *Stack) createBuckets(ctx context.Context) error {
	buckets, err := s.Included(bucketType)
	if err != nil {
		return err
	}
	if len(buckets) == 0 || s.emu.S3URL == "" {
		return nil
	}
	client := s.emu.S3()
	for _, id := range buckets {
		if err := s.createBucket(ctx, client, id); err != nil {
			return fmt.Errorf("bucket %s: %w", id, err)
		}
	}
	return nil
}

// Included returns the logical IDs of the template's resources of type typ
// whose Condition holds, sorted.
func (s *Stack) Included(typ string) ([]string, error) {
	var ids []string
	for _, id := range s.Template.ByType(typ) {
		cond := s.Template.Resources[id].Condition
		if cond != "" {
			v, err := s.Template.Resolve(samtemplate.Fn{Name: "Condition", Args: cond}, s.Context())
			if err != nil {
				return nil, fmt.Errorf("%s: condition %s: %w", id, cond, err)
			}
			if b, _ := v.(bool); !b {
				continue
			}
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// resolveProps resolves the named properties of resource id, leaving out
// those the template does not set.
func (s *Stack) resolveProps(id string, names ...string) (map[string]any, error) {
	props := s.Template.Resources[id].Properties
	sub := map[string]any{}
	for _, n := range names {
		if v, ok := props[n]; ok {
			sub[n] = v
		}
	}
	v, err := s.Template.Resolve(sub, s.Context())
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return m, nil
}

// defaultName is the physical name CloudFormation would generate, without
// its random suffix.
func (s *Stack) defaultName(id string) string { return s.Name + "-" + id }

// Context returns the template context of this stack: its name, Region and
// AccountID, and a Lookup that resolves Ref (table name, queue URL), Arn,
// QueueName and QueueUrl of its tables and queues. Ref of a function is its
// FunctionName or logical ID, Arn its Lambda ARN; Ref of any other resource
// is its logical ID.
func (s *Stack) Context() samtemplate.Context {
	return samtemplate.Context{StackName: s.Name, Region: Region, AccountID: AccountID, Lookup: s.lookup, Params: s.Params}
}

func (s *Stack) lookup(id, attr string) (string, error) {
	if v, ok, err := s.lookupCreated(id, attr); ok {
		return v, err
	}
	res, ok := s.Template.Resources[id]
	if !ok {
		return "", fmt.Errorf("no resource %s in the template", id)
	}
	switch res.Type {
	case bucketType:
		if s.emu == nil || s.emu.S3URL == "" {
			return "", fmt.Errorf("bucket %s was not created in stack %s: no S3 endpoint (set AWS_ENDPOINT_URL_S3)", id, s.Name)
		}
		return "", fmt.Errorf("%s %s was not created in stack %s (is its Condition false?)", res.Type, id, s.Name)
	case tableType, queueType:
		return "", fmt.Errorf("%s %s was not created in stack %s (is its Condition false?)", res.Type, id, s.Name)
	case "AWS::Serverless::Function", "AWS::Lambda::Function":
		return s.lookupFunction(id, res, attr)
	default:
		if attr == "" {
			return id, nil
		}
	}
	return "", fmt.Errorf("%s %s: attribute %q is not emulated", res.Type, id, attr)
}

// lookupCreated resolves attr of id when id is a table, queue or bucket
// the stack created; ok is false when it is none of them.
func (s *Stack) lookupCreated(id, attr string) (v string, ok bool, err error) {
	if name, ok := s.Tables[id]; ok {
		switch attr {
		case "":
			return name, true, nil
		case "Arn":
			return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", Region, AccountID, name), true, nil
		}
		return "", true, fmt.Errorf("table %s: attribute %s is not emulated", id, attr)
	}
	if q, ok := s.Queues[id]; ok {
		switch attr {
		case "", "QueueUrl":
			return q.URL, true, nil
		case "Arn":
			return q.ARN, true, nil
		case "QueueName":
			return q.Name, true, nil
		}
		return "", true, fmt.Errorf("queue %s: attribute %s is not emulated", id, attr)
	}
	if name, ok := s.Buckets[id]; ok {
		switch attr {
		case "":
			return name, true, nil
		case "Arn":
			return "arn:aws:s3:::" + name, true, nil
		}
		return "", true, fmt.Errorf("bucket %s: attribute %s is not emulated", id, attr)
	}
	return "", false, nil
}

// lookupFunction resolves attr of the function id: Ref is its
// FunctionName or logical ID, Arn its Lambda ARN.
func (s *Stack) lookupFunction(id string, res samtemplate.Resource, attr string) (string, error) {
	name := id
	if fn, ok := res.Properties["FunctionName"]; ok {
		n, err := s.Template.ResolveString(fn, s.Context())
		if err != nil {
			return "", fmt.Errorf("function %s: FunctionName: %w", id, err)
		}
		name = n
	}
	switch attr {
	case "":
		return name, nil
	case "Arn":
		return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", Region, AccountID, name), nil
	}
	return "", fmt.Errorf("%s %s: attribute %q is not emulated", res.Type, id, attr)
}

// FunctionEnv returns the template's environment variables for the function
// logicalID, resolved to this stack.
func (s *Stack) FunctionEnv(logicalID string) (map[string]string, error) {
	env, err := s.Template.FunctionEnv(logicalID, s.Context())
	if err != nil {
		return nil, fmt.Errorf("stack %s: %w", s.Name, err)
	}
	return env, nil
}

// Delete deletes the stack's tables and queues. Ones already gone are not an
// error.
func (s *Stack) Delete(ctx context.Context) error {
	var errs []error
	if len(s.Tables) > 0 {
		db := s.emu.DynamoDB()
		for id, name := range s.Tables {
			_, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
			var nf *dbtypes.ResourceNotFoundException
			if err != nil && !errors.As(err, &nf) {
				errs = append(errs, fmt.Errorf("delete table %s (%s): %w", id, name, err))
			}
		}
	}
	if len(s.Queues) > 0 {
		q := s.emu.SQS()
		for id, qu := range s.Queues {
			_, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(qu.URL)})
			var nf *sqstypes.QueueDoesNotExist
			if err != nil && !errors.As(err, &nf) {
				errs = append(errs, fmt.Errorf("delete queue %s (%s): %w", id, qu.Name, err))
			}
		}
	}
	if len(s.Buckets) > 0 {
		client := s.emu.S3()
		for id, name := range s.Buckets {
			if err := deleteBucket(ctx, client, name); err != nil {
				errs = append(errs, fmt.Errorf("delete bucket %s (%s): %w", id, name, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("delete stack %s: %w", s.Name, err)
	}
	return nil
}

// flexInt is an integer a template may write as a number or a string.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	*f = flexInt(n)
	return nil
}

// roundTrip decodes a resolved template value into a struct through JSON.
func roundTrip(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("properties: %w", err)
	}
	return nil
}
