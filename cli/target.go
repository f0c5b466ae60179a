package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
)

// The outputs of template.yaml that name what inspect, replay and status
// read: a deployed stack is found by its name alone.
const (
	outputInboxTable  = "InboxTableName"
	outputEventsQueue = "EventsQueueUrl"
	outputDLQ         = "EventsDLQUrl"
	outputBodyBucket  = "BodyBucketName"
)

// stackFlags are the flags inspect, replay and status share to choose the
// stack they talk to: the running local stack, or a deployed one.
type stackFlags struct {
	fs                             *flag.FlagSet
	stack, table, queueURL, dlqURL string
	stateFile                      string
	useAWS                         bool
}

// addStackFlags defines the stack flags on fs.
func addStackFlags(fs *flag.FlagSet) *stackFlags {
	f := &stackFlags{fs: fs}
	fs.StringVar(&f.stack, "stack", defaultStackName, "the deployed CloudFormation stack `name` to talk to (implies --aws); its outputs name the table and queues")
	fs.BoolVar(&f.useAWS, "aws", false, "talk to the deployed stack --stack names (default hookinbox), not the local one")
	fs.StringVar(&f.table, "table", "", "the inbox `table` (implies --aws; default: the stack's "+outputInboxTable+" output)")
	fs.StringVar(&f.queueURL, "queue-url", "", "the events queue `URL` (implies --aws; default: the stack's "+outputEventsQueue+" output)")
	fs.StringVar(&f.dlqURL, "dlq-url", "", "the DLQ `URL` (implies --aws; default: the stack's "+outputDLQ+" output)")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "state file of the running local stack")
	return f
}

// stackHelp is the part of a command's help that says which stack it
// talks to.
const stackHelp = `
By default it talks to the running local stack (hookinbox dev), and says
so. With --stack NAME (or --aws for the stack named hookinbox) it talks
to that deployed stack, with the configuration the AWS CLI uses
(AWS_PROFILE, AWS_REGION, ~/.aws/config; AWS_ENDPOINT_URL* to reach an
emulator instead), and finds its table and queues in the stack's outputs
(InboxTableName, EventsQueueUrl, EventsDLQUrl; it needs
cloudformation:DescribeStacks) unless --table, --queue-url and --dlq-url
name them.`

// target is the stack a command talks to.
type target struct {
	cfg aws.Config
	// local is the running local stack; nil for a deployed one.
	local                   *devState
	stack                   string
	table, queueURL, dlqURL string
	// bucket keeps the bodies too large for an item; "" when the stack
	// names none (a stack deployed before there was one).
	bucket string
	// args are the flags that choose this stack, for the commands a
	// command prints: "" or " --state-file F" locally, " --stack S" (and
	// any names given) on AWS.
	args string
}

// deployed reports whether the flags ask for a deployed stack.
func (f *stackFlags) deployed() bool {
	if f.useAWS {
		return true
	}
	for _, n := range []string{"stack", "table", "queue-url", "dlq-url"} {
		if flagSet(f.fs, n) {
			return true
		}
	}
	return false
}

// resolve finds the stack the flags choose: its inbox table and, when
// queues is set, its two queues. Every client built from the target's
// configuration refuses, before sending it, an operation allowed does not
// accept (nil accepts every one); the CloudFormation look-up is one read.
func (f *stackFlags) resolve(ctx context.Context, command string, stderr io.Writer, allowed func(operation string) bool, queues bool) (*target, error) {
	if !f.deployed() {
		st, err := loadState(f.stateFile)
		if err != nil {
			return nil, fmt.Errorf("%w; or pass --stack NAME to talk to a deployed stack", err)
		}
		return f.localTarget(command, stderr, st, allowed)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the AWS configuration: %w", err)
	}
	guard(&cfg, allowed)
	t := &target{cfg: cfg, stack: f.stack, table: f.table, queueURL: f.queueURL, dlqURL: f.dlqURL, args: " --stack " + f.stack}
	// Resources named by their flags alone belong to no stack we know.
	if !f.useAWS && !flagSet(f.fs, "stack") && t.table != "" && (!queues || t.queueURL != "" && t.dlqURL != "") {
		t.stack, t.args = "", ""
	}
	for _, fl := range []struct{ name, value string }{{"table", f.table}, {"queue-url", f.queueURL}, {"dlq-url", f.dlqURL}} {
		if fl.value != "" {
			t.args += " --" + fl.name + " " + fl.value
		}
	}
	if t.table == "" || queues && (t.queueURL == "" || t.dlqURL == "") {
		out, err := stackOutputs(ctx, cloudformation.NewFromConfig(cfg), f.stack)
		if err != nil {
			return nil, fmt.Errorf("%w\n(pass --stack with the stack name sam deploy was given, or name the resources with --table, --queue-url and --dlq-url)", err)
		}
		t.table, t.queueURL, t.dlqURL = orDefault(t.table, out[outputInboxTable]), orDefault(t.queueURL, out[outputEventsQueue]), orDefault(t.dlqURL, out[outputDLQ])
		t.bucket = out[outputBodyBucket]
		for _, o := range []struct {
			key, value string
			needed     bool
		}{{outputInboxTable, t.table, true}, {outputEventsQueue, t.queueURL, queues}, {outputDLQ, t.dlqURL, queues}} {
			if o.needed && o.value == "" {
				return nil, fmt.Errorf("stack %s has no output %s: is it a hookinbox stack, deployed from this version's template.yaml?", f.stack, o.key)
			}
		}
	}
	fmt.Fprintf(stderr, "hookinbox %s: %s in %s (table %s)\n", command, t.where(), orDefault(cfg.Region, "no region"), t.table)
	return t, nil
}

// where names the target for a person: "AWS stack NAME", or "AWS
// resources" when the flags named them without a stack.
func (t *target) where() string {
	if t.stack == "" {
		return "AWS resources"
	}
	return "AWS stack " + t.stack
}

// localTarget is the running local stack st.
func (f *stackFlags) localTarget(command string, stderr io.Writer, st *devState, allowed func(string) bool) (*target, error) {
	cfg, err := st.awsConfig()
	if err != nil {
		return nil, err
	}
	guard(&cfg, allowed)
	t := &target{cfg: cfg, local: st, stack: st.StackName, table: st.Tables["InboxTable"], bucket: st.Buckets["BodyBucket"],
		queueURL: st.Queues["EventsQueue"].URL, dlqURL: st.Queues["EventsDLQ"].URL}
	if f.stateFile != defaultStateFile() {
		t.args = " --state-file " + f.stateFile
	}
	if t.table == "" {
		return nil, fmt.Errorf("the running stack has no InboxTable (is it in template.yaml?)")
	}
	fmt.Fprintf(stderr, "hookinbox %s: using the local stack (%s); pass --stack NAME for a deployed one\n", command, f.stateFile)
	return t, nil
}

// store returns the store on the target's inbox table, reading the
// bodies kept in its bucket (path-style on the local stack's S3 server).
func (t *target) store() *inbox.DynamoDB {
	return inbox.NewDynamoDB(dynamodb.NewFromConfig(t.cfg), t.table).WithBodies(inbox.BodiesFor(t.cfg, t.bucket, t.local != nil))
}

// limitedTo returns t with clients that also refuse, before sending it,
// any operation allowed does not accept (see guard).
func (t *target) limitedTo(allowed func(operation string) bool) *target {
	c := *t
	c.cfg = t.cfg.Copy()
	c.cfg.APIOptions = slices.Clone(t.cfg.APIOptions)
	guard(&c.cfg, allowed)
	return &c
}

// replayer returns the replay of t's DLQ into its events queue, as the
// dlq-replay function runs it.
func (t *target) replayer(cfg replay.Config) *replay.Handler {
	sq := sqs.NewFromConfig(t.cfg)
	return replay.New(cfg, t.store(), queue.New(sq, t.queueURL), queue.New(sq, t.dlqURL), nil)
}

// stackOutputs returns the outputs of the CloudFormation stack name.
func stackOutputs(ctx context.Context, cfn *cloudformation.Client, name string) (map[string]string, error) {
	out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("read the outputs of stack %s: %w", name, err)
	}
	if len(out.Stacks) != 1 {
		return nil, fmt.Errorf("read the outputs of stack %s: CloudFormation returned %d stacks", name, len(out.Stacks))
	}
	outputs := map[string]string{}
	for _, o := range out.Stacks[0].Outputs {
		outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return outputs, nil
}

// errNotAllowed is the refusal of an operation a command does not make
// (see guard).
var errNotAllowed = errors.New("refused before sending")

// guard makes every client built from cfg refuse, before sending it, any
// operation allowed does not accept, so that what a command says it does
// (inspect and status only read) is all it can do. nil allows every one.
func guard(cfg *aws.Config, allowed func(operation string) bool) {
	if allowed == nil {
		return
	}
	cfg.APIOptions = append(cfg.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("hookinboxAllowedOperations",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if op := middleware.GetOperationName(ctx); !allowed(op) {
					return middleware.InitializeOutput{}, middleware.Metadata{}, fmt.Errorf("%s: %w: this command does not change the stack", op, errNotAllowed)
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
}

// readsOnly accepts the operations that only read: Get*, Describe*,
// List*, Query, Scan and BatchGet*.
func readsOnly(operation string) bool {
	for _, p := range []string{"Get", "Describe", "List", "BatchGet"} {
		if strings.HasPrefix(operation, p) {
			return true
		}
	}
	return operation == "Query" || operation == "Scan"
}

// readsAndPeeks accepts what a dry-run replay does: it reads, and
// receives DLQ messages and makes them visible again; it sends, deletes
// and writes nothing.
func readsAndPeeks(operation string) bool {
	return readsOnly(operation) || operation == "ReceiveMessage" || operation == "ChangeMessageVisibility"
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
