package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/local/sink"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/webhook"
)

// LocalOptions tunes a Local stack.
type LocalOptions struct {
	// Pollers is how many event-source pollers feed the processor, as
	// Lambda runs several; default 4.
	Pollers int
	// Visibility replaces the events queue's VisibilityTimeout (180 s in
	// template.yaml), so that a copy that met a live lease, or a batch
	// whose invocation failed, comes back in seconds; default 5 s. It
	// changes when things happen, not what happens.
	Visibility time.Duration
	// Reconcile is how often the ReconcilerFunction runs (rate(5
	// minutes) in template.yaml); default 5 s. The stack runs it with
	// STUCK_AFTER 15 s and the receiver with REENQUEUE_GRACE 10 s, so a
	// claim whose message was never sent is re-enqueued in seconds, not
	// after 15 minutes.
	Reconcile time.Duration
	// Lease replaces LEASE_DURATION (15 min) when set: under faults a
	// worker can lose track of its lease, and the copy that takes over
	// waits for it to end.
	Lease time.Duration
	// Proxy, when set, is asked for an endpoint to use instead of each
	// upstream the functions call (names proxyDynamoDB, ...): a fault
	// proxy. Chaos's own reads and the event-source pollers go direct.
	Proxy func(name, upstream string) (string, error)
	// Log receives the functions' JSON logs; nil discards them.
	Log *slog.Logger
	// Bootstraps, when set, name the bootstrap of each function (by
	// logical ID), built for this host (devstack.BuildFunctionIn), which
	// then runs under aws-lambda-rie instead of in process: another
	// module's stack, whose processor is its own main.
	Bootstraps map[string]string
	// Params are the template's parameter values, over its defaults.
	Params map[string]string
	// Builders replace the in-process builders of functions (by logical
	// ID): a business of a test's own, run in process.
	Builders map[string]lambdafn.Builder
	// Destination, when set, is served on 127.0.0.1 as a destination
	// the processor delivers every event to (pipeline.ForwardName),
	// signed with pipeline.DestinationSecret.
	Destination *sink.Sink
}

// Local is a fresh pipeline.Stack of template.yaml on the local
// emulators: its tables and queues under a stack name of its own, the
// ReceiverFunction, ProcessorFunction and ReconcilerFunction built as in
// Lambda and cut off at their Timeout, the processor fed by SQS
// event-source pollers, the reconciler on a schedule, and the SES and
// Stripe stand-ins they call. Its clocks run faster than in AWS (see
// LocalOptions); what happens, and in which order, is the same.
// Close tears it down.
type Local struct {
	Stack *pipeline.Stack

	receive func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	// receiveTimeout is the ReceiverFunction's Timeout, as Lambda enforces it.
	receiveTimeout time.Duration
	sqs            *sqs.Client
	events         *queue.Queue
	inbox          *inbox.DynamoDB
	ledger         *ledger.Ledger
	business       businessReader
	stop           context.CancelFunc
	functions      []*devstack.Function // those running under aws-lambda-rie
	destination    *standin.Server      // serves LocalOptions.Destination
	pollers        sync.WaitGroup
}

// NewLocal starts the stack stackName from tpl on emu and its pollers;
// they run until Close.
func NewLocal(ctx context.Context, emu *devstack.Emulators, tpl *samtemplate.Template, stackName string, opts LocalOptions) (*Local, error) {
	opts = opts.withDefaults()
	dest, forward, err := serveDestination(opts.Destination)
	if err != nil {
		return nil, fmt.Errorf("local stack %s: serve the destination: %w", stackName, err)
	}
	st, err := pipeline.Start(ctx, emu, pipeline.Options{
		Name: stackName, Template: tpl,
		Env:    map[string]string{"METRICS_FILE": os.DevNull}, // the embedded metric lines are not the verdict
		Log:    func(id string) *slog.Logger { return opts.Log.With("function", id) },
		Params: opts.Params, Builders: opts.Builders, Forward: forward,
	})
	if err != nil {
		if dest != nil {
			dest.Close()
		}
		return nil, err
	}
	l := &Local{Stack: st, sqs: emu.SQS(), destination: dest}
	if err := l.start(ctx, emu, stackName, opts); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("local stack %s: %w", stackName, err)
	}
	return l, nil
}

// withDefaults returns o with the default of each option not set.
func (o LocalOptions) withDefaults() LocalOptions {
	if o.Pollers <= 0 {
		o.Pollers = 4
	}
	if o.Visibility <= 0 {
		o.Visibility = 5 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Reconcile <= 0 {
		o.Reconcile = 5 * time.Second
	}
	return o
}

// serveDestination serves s, when not nil, and returns the server and
// the URL the processor forwards to.
func serveDestination(s *sink.Sink) (*standin.Server, string, error) {
	if s == nil {
		return nil, "", nil
	}
	dest, err := standin.Serve(s, "")
	if err != nil {
		return nil, "", err
	}
	return dest, dest.URL + "/", nil
}

// start builds the stack's functions, sets the events queue's visibility
// timeout, opens the stores chaos reads and starts the pollers.
func (l *Local) start(ctx context.Context, emu *devstack.Emulators, stackName string, opts LocalOptions) error {
	st := l.Stack
	via, err := upstreams(emu, st, opts.Proxy)
	if err != nil {
		return err
	}
	recv, proc, rec, err := l.buildFunctions(ctx, opts, via)
	if err != nil {
		return err
	}
	switch h := recv.(type) {
	case func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error):
		l.receive = h
	case lambdalocal.Invoker:
		l.receive = httpInvoker(h)
	default:
		return fmt.Errorf("ReceiverFunction's handler is a %T", recv)
	}
	l.receiveTimeout = functionTimeout(st, "ReceiverFunction")
	evq := st.Queues["EventsQueue"]
	if _, err := l.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
		QueueUrl:   &evq.URL,
		Attributes: map[string]string{"VisibilityTimeout": strconv.Itoa(int(opts.Visibility.Seconds()))},
	}); err != nil {
		return fmt.Errorf("set the events queue's visibility timeout: %w", err)
	}
	db := emu.DynamoDB()
	l.events = queue.New(emu.SQS(), evq.URL)
	l.inbox = st.Inbox()
	l.ledger = ledger.New(db, st.Tables["InboxTable"], 0)
	if table, ok := st.Tables["ShopTable"]; ok {
		l.business = shopBusiness(shop.New(shop.Config{Table: table, MailFrom: "shop@example.com"}, db, nil, nil))
	} else {
		l.business = tableRecords(db, businessTables(st.Tables))
	}
	l.startPollers(ctx, stackName, opts, proc, rec)
	return nil
}

// upstreams returns the endpoint the functions call for each upstream
// (proxyDynamoDB, ...): the emulator's or stand-in's, or what proxy
// answers for it.
func upstreams(emu *devstack.Emulators, st *pipeline.Stack, proxy func(name, upstream string) (string, error)) (map[string]string, error) {
	via := map[string]string{
		proxyDynamoDB: emu.DynamoDBURL, proxySQSReceiver: emu.SQSURL, proxySQS: emu.SQSURL,
		proxySES: st.Endpoints["AWS_ENDPOINT_URL_SESV2"], proxyStripe: st.Endpoints["STRIPE_API_URL"],
		proxyGoPay: st.Endpoints["GOPAY_API_URL"],
	}
	if proxy == nil {
		return via, nil
	}
	for _, name := range []string{proxyDynamoDB, proxySQSReceiver, proxySQS, proxySES, proxyStripe, proxyGoPay} {
		var err error
		if via[name], err = proxy(name, via[name]); err != nil {
			return nil, err
		}
	}
	return via, nil
}

// buildFunctions builds the receiver, the processor and the reconciler,
// each calling the upstreams via names, in process or under
// aws-lambda-rie (LocalOptions.Bootstraps).
func (l *Local) buildFunctions(ctx context.Context, opts LocalOptions, via map[string]string) (recv, proc, rec any, err error) {
	build := func(id, sqsName string, extra map[string]string) (any, error) {
		env := map[string]string{
			"AWS_ENDPOINT_URL_DYNAMODB": via[proxyDynamoDB], "AWS_ENDPOINT_URL_SQS": via[sqsName],
			"AWS_ENDPOINT_URL_SESV2": via[proxySES], "STRIPE_API_URL": via[proxyStripe], "GOPAY_API_URL": via[proxyGoPay],
		}
		if opts.Lease > 0 {
			env["LEASE_DURATION"] = opts.Lease.String()
		}
		maps.Copy(env, extra)
		if path, ok := opts.Bootstraps[id]; ok {
			fn, err := l.Stack.StartBootstrap(ctx, id, path, env, io.Discard)
			if err != nil {
				return nil, err
			}
			l.functions = append(l.functions, fn)
			return fn, nil
		}
		return l.Stack.Build(ctx, id, env)
	}
	recvEnv := LocalSecrets.env() // every provider a corpus may hold
	recvEnv["REENQUEUE_GRACE"] = "10s"
	if recv, err = build("ReceiverFunction", proxySQSReceiver, recvEnv); err != nil {
		return nil, nil, nil, err
	}
	// BACKOFF_MAX 20 s (15 min in template.yaml): a retry waits seconds,
	// not minutes, as the other clocks here run faster.
	if proc, err = build("ProcessorFunction", proxySQS, map[string]string{"BACKOFF_MAX": "20s"}); err != nil {
		return nil, nil, nil, err
	}
	if rec, err = build("ReconcilerFunction", proxySQS, map[string]string{"STUCK_AFTER": "15s"}); err != nil {
		return nil, nil, nil, err
	}
	return recv, proc, rec, nil
}

// functionTimeout returns the Timeout of the function id, 30 s when st
// has no such function.
func functionTimeout(st *pipeline.Stack, id string) time.Duration {
	fn, err := st.Function(id)
	if err != nil {
		return 30 * time.Second
	}
	return time.Duration(fn.Timeout) * time.Second
}

// startPollers runs the reconciler rec on its schedule and the events
// queue's pollers feeding the processor proc, until Close.
func (l *Local) startPollers(ctx context.Context, stackName string, opts LocalOptions, proc, rec any) {
	pollCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = stop
	reconciler := &lambdalocal.Schedule{Name: stackName + "-reconciler", Interval: opts.Reconcile,
		Function: timeoutInvoker{invoker(rec), functionTimeout(l.Stack, "ReconcilerFunction")}, Log: opts.Log}
	l.pollers.Add(1)
	go func() {
		defer l.pollers.Done()
		_ = reconciler.Run(pollCtx)
	}()
	evq := l.Stack.Queues["EventsQueue"]
	procInvoker := timeoutInvoker{invoker(proc), functionTimeout(l.Stack, "ProcessorFunction")}
	for range opts.Pollers {
		src := &lambdalocal.SQSSource{Client: l.sqs, QueueURL: evq.URL, QueueARN: evq.ARN, Region: devstack.Region,
			BatchSize: 10, Function: procInvoker, Log: opts.Log}
		l.pollers.Add(1)
		go func() {
			defer l.pollers.Done()
			_ = src.Run(pollCtx)
		}()
	}
}

// timeoutInvoker ends each invocation at the function's timeout, as
// Lambda does: a call stuck on a stalled connection is cut off, and the
// batch comes back after the visibility timeout.
type timeoutInvoker struct {
	lambdalocal.Invoker
	timeout time.Duration
}

func (t timeoutInvoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	return t.Invoker.Invoke(ctx, payload)
}

// invoker returns h, a handler Build made or a function running under
// aws-lambda-rie, as an Invoker.
func invoker(h any) lambdalocal.Invoker {
	if inv, ok := h.(lambdalocal.Invoker); ok {
		return inv
	}
	return lambdalocal.InProcess(h)
}

// httpInvoker returns the receiver's handler of a receiver running under
// aws-lambda-rie: the request and the answer as JSON, as Lambda passes
// them.
func httpInvoker(inv lambdalocal.Invoker) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		var resp events.APIGatewayV2HTTPResponse
		payload, err := json.Marshal(req)
		if err != nil {
			return resp, err
		}
		out, err := inv.Invoke(ctx, payload)
		if err != nil {
			return resp, err
		}
		if err := json.Unmarshal(out, &resp); err != nil {
			return resp, fmt.Errorf("receiver answered %q: %w", out, err)
		}
		return resp, nil
	}
}

// Close stops the pollers, the functions and the stand-ins and deletes
// the stack.
func (l *Local) Close() error {
	if l.stop != nil {
		l.stop()
		l.pollers.Wait()
	}
	var errs []error
	for _, fn := range l.functions {
		errs = append(errs, fn.Stop())
	}
	if l.destination != nil {
		l.destination.Close()
	}
	return errors.Join(append(errs, l.Stack.Close())...)
}

// Deliver implements Target: for a Stripe event the Stripe stand-in first
// takes the event's objects as its own (as Stripe's state is when it
// sends the event, and as `hookinbox dev` does); then the receiver gets a
// delivery signed now, as the event's provider signs it.
func (l *Local) Deliver(ctx context.Context, ev Event) (int, error) {
	// The provider's state changes before it notifies (GoPay's
	// notification is the payment id alone).
	if err := l.Stack.Stage(ev.Provider, ev.Raw); err != nil {
		return 0, err
	}
	signed, err := LocalSecrets.Signed(ev, time.Now())
	if err != nil {
		return 0, err
	}
	req := lambdalocal.Delivery(ev.Provider, signed)
	ctx, cancel := context.WithTimeout(ctx, l.receiveTimeout)
	defer cancel()
	resp, err := l.receive(ctx, req)
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// Requeue implements Target.
func (l *Local) Requeue(ctx context.Context, ev Event) error {
	return l.events.Send(ctx, queue.Envelope{Key: ev.Key(), Type: ev.Type})
}

// Busy implements Target.
func (l *Local) Busy(ctx context.Context) (int, int, error) {
	return busy(ctx, l.events, l.inbox)
}

// Snapshot implements Target, with what the stand-ins performed.
func (l *Local) Snapshot(ctx context.Context, keys []webhook.Key) (Snapshot, error) {
	s, err := snapshot(ctx, l.inbox, l.ledger, l.business, keys)
	if err != nil {
		return s, err
	}
	s.Performed = map[string]int{}
	for _, m := range l.Stack.SES.Sent() {
		s.Performed["email "+m.Tags[shop.TagIdempotencyKey]]++
	}
	invoices := map[string]map[string]bool{}
	for _, c := range l.Stack.Stripe.Calls() {
		if c.InvoiceID == "" {
			continue
		}
		if invoices[c.Event] == nil {
			invoices[c.Event] = map[string]bool{}
		}
		invoices[c.Event][c.InvoiceID] = true
	}
	for ev, ids := range invoices {
		s.Performed["invoice "+ev] = len(ids)
	}
	return s, nil
}
