package processor_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestCrashedProcessorBootstrapLosesNothing runs the real processor
// bootstrap under aws-lambda-rie, fed by the events queue, and SIGKILLs it
// while four checkouts wait on Stripe's invoice call (an out-of-memory kill
// or a Lambda timeout does the same). The stack runs with the short timing
// configuration (timeout 3 s, lease 5 s, visibility 8 s), which keeps the
// template's rule. Every event must end DONE within the visibility timeout
// and a margin, each effect once, nothing parked, no message left.
func TestCrashedProcessorBootstrapLosesNothing(t *testing.T) {
	p, fn := shortStack(t)
	tm := shortTiming

	keys := deliverCheckouts(t, p, "crash", 20)
	held := p.Stripe.HoldInvoices(4) // Stripe stops answering the next 4 invoice calls

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polled := make(chan struct{})
	go func() { defer close(polled); _ = eventSource(p, fn).Run(ctx) }()

	var hung []string
	for len(hung) < 4 {
		select {
		case k := <-held:
			hung = append(hung, k)
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d invoice calls reached Stripe within 30s, want 4 hanging", len(hung))
		}
	}
	killed, err := fn.KillRuntime()
	if err != nil {
		t.Fatal(err)
	}
	crashedAt := time.Now()
	p.Stripe.ReleaseInvoices() // Stripe answers again
	t.Logf("SIGKILLed the bootstrap (pid %v) while %v waited on Stripe", killed, hung)

	// Bounded: the held events come back after the visibility timeout and
	// are taken over; a margin for the emulators and the RIE's restart.
	limit := tm.Visibility + 20*time.Second
	for !(p.AllIn(t, keys, inbox.Done) && p.QueueEmpty(t)) {
		if time.Since(crashedAt) > limit {
			var stuck []string
			for _, k := range keys {
				if it, _ := p.Inbox.Get(context.Background(), k); it.Status != inbox.Done {
					stuck = append(stuck, string(k)+" "+string(it.Status))
				}
			}
			t.Fatalf("%v after the crash: not DONE: %v (queue empty: %v; DLQ: %v)", limit, stuck, p.QueueEmpty(t), p.DLQReasons(t))
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	<-polled

	for _, k := range hung {
		it, err := p.Inbox.Get(context.Background(), heldEvent(k))
		if err != nil || it.Attempts != 2 {
			t.Errorf("%s (held when killed): attempts %d (%v), want 2: the crash and the takeover", k, it.Attempts, err)
		}
	}
	p.EffectsOnce(t, keys)
	if d := p.DLQReasons(t); len(d) != 0 {
		t.Errorf("DLQ holds %v, want nothing parked", d)
	}
}

// TestHangingEffectsEndInsideTheInvocation runs the real bootstrap under
// aws-lambda-rie with a 3 s timeout while Stripe does not answer two
// invoice calls. The processor must not be killed by the timeout: the
// hanging calls are cut off before the deadline, their events FAILED and
// retried after a backoff, every invocation answers, and every event ends
// DONE with each effect once.
func TestHangingEffectsEndInsideTheInvocation(t *testing.T) {
	p, fn := shortStack(t)
	keys := deliverCheckouts(t, p, "hang", 6)
	held := p.Stripe.HoldInvoices(2) // never released: the calls hang until their client gives up
	counted := &invocations{Invoker: fn}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polled := make(chan struct{})
	go func() { defer close(polled); _ = eventSource(p, counted).Run(ctx) }()

	// The first retry comes within the 10 s backoff ceiling.
	deadline := time.Now().Add(shortTiming.Visibility + 20*time.Second)
	for !(p.AllIn(t, keys, inbox.Done) && p.QueueEmpty(t)) {
		if time.Now().After(deadline) {
			t.Fatalf("events not all DONE within %v", shortTiming.Visibility+20*time.Second)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	<-polled

	var hung []string
	for len(hung) < 2 {
		hung = append(hung, <-held)
	}
	for _, k := range hung {
		if it, _ := p.Inbox.Get(context.Background(), heldEvent(k)); it.Attempts != 2 {
			t.Errorf("%s (its invoice call hung): attempts %d, want 2: cut off, then retried", k, it.Attempts)
		}
	}
	if calls, failed := counted.counts(); calls == 0 || failed != 0 {
		t.Errorf("%d invocations, %d failed (timed out or crashed); want none failed", calls, failed)
	}
	p.EffectsOnce(t, keys)
	if d := p.DLQReasons(t); len(d) != 0 {
		t.Errorf("DLQ holds %v, want nothing parked", d)
	}
}

// shortStack returns a pipeline whose events queue and real processor
// bootstrap (under aws-lambda-rie) run with shortTiming, which keeps the
// template's timing rule at a fraction of its durations.
func shortStack(t *testing.T) (*pipelinetest.Pipeline, *devstack.Function) {
	t.Helper()
	p := pipelinetest.New(t)
	tm := shortTiming
	if err := tm.Validate(); err != nil {
		t.Fatal(err)
	}
	p.SetVisibility(t, tm.Visibility)
	fn := p.StartBootstrap(t, "ProcessorFunction", map[string]string{
		"AWS_LAMBDA_FUNCTION_TIMEOUT": strconv.Itoa(int(tm.FunctionTimeout / time.Second)),
		"LEASE_DURATION":              tm.Lease.String(),
		"MESSAGE_BUDGET":              tm.Budget.String(),
		"OUTCOME_RESERVE":             tm.Reserve.String(),
		"MAX_RECEIVE_COUNT":           strconv.Itoa(tm.MaxReceiveCount),
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", p.Logs.String())
		}
	})
	return p, fn
}

// eventSource feeds the pipeline's events queue to fn as Lambda's event
// source mapping does.
func eventSource(p *pipelinetest.Pipeline, fn lambdalocal.Invoker) *lambdalocal.SQSSource {
	return &lambdalocal.SQSSource{
		Client: p.SQS, QueueURL: p.Events.URL(), QueueARN: p.Stack.Queues["EventsQueue"].ARN,
		BatchSize: 10, Function: fn,
	}
}

// invocations counts the invocations of a function and those that failed.
type invocations struct {
	lambdalocal.Invoker
	mu            sync.Mutex
	calls, failed int
}

func (c *invocations) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	out, err := c.Invoker.Invoke(ctx, payload)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if err != nil && ctx.Err() == nil {
		c.failed++
	}
	return out, err
}

func (c *invocations) counts() (calls, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.failed
}

// TestRecordedErrorsCarryNoEmailAddress: an effect refused with the
// recipient's address in its error parks the event with the address
// redacted from last_error, the DLQ reason and the log.
func TestRecordedErrorsCarryNoEmailAddress(t *testing.T) {
	p := pipelinetest.New(t)
	// SES refuses the welcome email permanently, naming the recipient in
	// its error text, as it does.
	key, body := pipelinetest.Checkout("privacy", 1, time.Now().Add(-time.Minute))
	const address = "buyer1@example.com"
	p.SES.FailFor(address, http.StatusBadRequest)
	p.Deliver(t, body)
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{key}) })

	it, err := p.Inbox.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if it.Status != inbox.Dead || !strings.Contains(it.LastError, "identities failed the check") {
		t.Fatalf("item: %s, last_error %q; want DEAD with SES's reason", it.Status, it.LastError)
	}
	reason := p.DLQReasons(t)[key]
	logText := p.Logs.String()
	for what, text := range map[string]string{"last_error": it.LastError, "DLQ reason attribute": reason, "log": logText} {
		if strings.Contains(text, address) {
			t.Errorf("%s carries the address: %q", what, text)
		}
	}
	if !strings.Contains(it.LastError, logs.RedactedEmail) || reason != it.LastError {
		t.Errorf("last_error %q, DLQ reason %q; want the same reason with %s in place of the address", it.LastError, reason, logs.RedactedEmail)
	}
}
