package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
)

// keyList collects repeated --key flags.
type keyList []string

func (k *keyList) String() string { return strings.Join(*k, ",") }

func (k *keyList) Set(s string) error {
	*k = append(*k, normalizeKey(s))
	return nil
}

// normalizeKey makes a bare Stripe event ID a key: evt_123 → stripe#evt_123.
func normalizeKey(s string) string {
	if !strings.Contains(s, "#") {
		return "stripe#" + s
	}
	return s
}

func cmdReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", "(--all [--type T] [--max N] | --key K [--key K ...]) [--dry-run] [--json]", `
Sends parked events back to the processor, exactly as the dlq-replay
function does (internal/replay): each event's claim is put back to FAILED
(attempts and last error kept) and its message sent to the events queue; a
DLQ message is deleted only after its copy was sent, or when its event is
already DONE. Messages that are not envelopes are reported and left in the
DLQ. --dry-run reports what would happen and changes nothing.

While a local stack (hookinbox dev) is running, and no AWS_ENDPOINT_URL*
variable is set, it replays there, and says so. Otherwise, or with --aws,
it talks to AWS with the default configuration (AWS_PROFILE, AWS_REGION) or
to the endpoints in AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_DYNAMODB /
AWS_ENDPOINT_URL_SQS. There the table and queues are found by the names
template.yaml gives them: <stack>-inbox, <stack>-events, <stack>-events-dlq.

Examples:
  hookinbox replay --all --dry-run                  what would the DLQ replay do?
  hookinbox replay --all --max 100                  move up to 100 messages back
  hookinbox replay --all --type checkout.session.completed
  hookinbox replay --key stripe#evt_123 --key evt_456
  hookinbox replay --all --json --stack shop-prod`)
	all := fs.Bool("all", false, "replay the DLQ (up to --max messages)")
	max := fs.Int("max", 0, "with --all: the most DLQ messages to handle (default 100)")
	var keys keyList
	fs.Var(&keys, "key", "replay this event (`provider#id`, or a bare evt_ ID), whether or not it is in the DLQ; repeatable")
	typ := fs.String("type", "", "with --all: only DLQ messages of this event `type`")
	dryRun := fs.Bool("dry-run", false, "report only; change nothing")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	stack := fs.String("stack", "hookinbox", "the stack `name` the table and queues are named after")
	table := fs.String("table", "", "the inbox table (default <stack>-inbox)")
	queueURL := fs.String("queue-url", "", "the events queue URL (default: the URL of <stack>-events)")
	dlqURL := fs.String("dlq-url", "", "the DLQ URL (default: the URL of <stack>-events-dlq)")
	useAWS := fs.Bool("aws", false, "use the default AWS configuration even while a local stack is running")
	stateFile := fs.String("state-file", defaultStateFile(), "state file of the running local stack")
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	for _, k := range rest {
		keys = append(keys, normalizeKey(k))
	}
	req := replay.Request{All: *all, Max: *max, Keys: keys, EventType: *typ, DryRun: *dryRun}
	if err := req.Validate(); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "replay request: "))
	}

	var cfg aws.Config
	if st, lerr := loadState(*stateFile); lerr == nil && !*useAWS && !endpointsInEnv() {
		if cfg, err = st.awsConfig(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "hookinbox replay: using the local stack (%s); pass --aws for AWS\n", *stateFile)
		*table = orDefault(*table, st.Tables["InboxTable"])
		*queueURL = orDefault(*queueURL, st.Queues["EventsQueue"].URL)
		*dlqURL = orDefault(*dlqURL, st.Queues["EventsDLQ"].URL)
	} else if cfg, err = config.LoadDefaultConfig(ctx); err != nil {
		return fmt.Errorf("load the AWS configuration: %w", err)
	}
	sq := sqs.NewFromConfig(cfg)
	if *table == "" {
		*table = *stack + "-inbox"
	}
	if *queueURL == "" {
		if *queueURL, err = queueURLOf(ctx, sq, *stack+"-events"); err != nil {
			return err
		}
	}
	if *dlqURL == "" {
		if *dlqURL, err = queueURLOf(ctx, sq, *stack+"-events-dlq"); err != nil {
			return err
		}
	}
	h := replay.New(replay.Config{}, inbox.NewDynamoDB(dynamodb.NewFromConfig(cfg), *table),
		queue.New(sqs.NewFromConfig(cfg), *queueURL), queue.New(sqs.NewFromConfig(cfg), *dlqURL), nil)
	sum, err := h.Handle(ctx, req)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		fmt.Fprint(stdout, sum.Text())
	}
	if sum.Failed > 0 {
		return fmt.Errorf("%d failed; they are left in the DLQ (see the notes above)", sum.Failed)
	}
	if sum.Stopped != "" && !strings.HasPrefix(sum.Stopped, "reached max") {
		fmt.Fprintf(stderr, "hookinbox replay: stopped early: %s\n", sum.Stopped)
	}
	return nil
}

// queueURLOf returns the URL of the queue named name.
func queueURLOf(ctx context.Context, sq *sqs.Client, name string) (string, error) {
	out, err := sq.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return "", fmt.Errorf("find queue %s (give --stack, or --queue-url and --dlq-url): %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// endpointsInEnv reports whether AWS_ENDPOINT_URL or a per-service
// endpoint variable this command uses is set.
func endpointsInEnv() bool {
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS"} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
