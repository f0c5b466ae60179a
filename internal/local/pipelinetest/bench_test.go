package pipelinetest_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/floor"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/webhook"
)

// BenchmarkColdStart times each real bootstrap under aws-lambda-rie from
// exec to its first answered invocation (the RIE starts the bootstrap at
// the first invoke), beside the floor program's (cmd/floor). Each
// iteration starts a fresh RIE; run with -benchtime 20x and read the
// median-ms metric (`make bench` does).
func BenchmarkColdStart(b *testing.B) {
	p := pipelinetest.New(b)
	root, err := devstack.RepoRoot("")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	checkout := func() []byte {
		_, body := pipelinetest.Checkout("cold", int(time.Now().UnixNano()%1e5), time.Now())
		return mustJSON(b, p.Stack.StripeRequest(body))
	}
	functions := []struct {
		name, logicalID string // logicalID "" is the floor
		payload         func() []byte
	}{
		{"floor", "", checkout},
		{"ReceiverFunction", "ReceiverFunction", checkout},
		{"ProcessorFunction", "ProcessorFunction", func() []byte {
			env := queue.Envelope{Key: webhook.NewKey("stripe", "evt_coldnone"), Type: "checkout.session.completed"}
			return mustJSON(b, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: env.Marshal(),
				Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}})
		}},
		{"DlqReplayFunction", "DlqReplayFunction", func() []byte { return mustJSON(b, replay.Request{All: true, DryRun: true}) }},
		{"ReconcilerFunction", "ReconcilerFunction", func() []byte { return mustJSON(b, events.EventBridgeEvent{DetailType: "Scheduled Event"}) }},
	}
	for _, fn := range functions {
		b.Run(fn.name, func(b *testing.B) {
			bootstrap := buildBootstrap(b, root, filepath.Join(dir, fn.name), fn.logicalID)
			env := coldEnv(b, p, fn.logicalID)
			var took []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				f, err := devstack.StartFunction(context.Background(), bootstrap, env, devstack.Options{Root: root})
				if err != nil {
					b.Fatal(err)
				}
				payload := fn.payload()
				b.StartTimer()
				begin := time.Now()
				_, err = f.Invoke(context.Background(), payload)
				took = append(took, time.Since(begin))
				b.StopTimer()
				if stopErr := f.Stop(); stopErr != nil {
					b.Fatal(stopErr)
				}
				if err != nil {
					b.Fatalf("first invocation: %v", err)
				}
				b.StartTimer()
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "median-ms")
		})
	}
}

// BenchmarkInit times Lambda's init phase of the receiver's bootstrap and
// the floor's: from exec to the bootstrap's first request for an event
// (GET /2018-06-01/runtime/invocation/next), which comes once its
// package init, its AWS configuration and its handler are done. The
// runtime API is a stand-in that answers nothing; each iteration is a
// fresh process. Read the median-ms metric.
func BenchmarkInit(b *testing.B) {
	p := pipelinetest.New(b)
	root, err := devstack.RepoRoot("")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for _, fn := range []struct{ name, logicalID string }{{"floor", ""}, {"ReceiverFunction", "ReceiverFunction"}} {
		b.Run(fn.name, func(b *testing.B) {
			bootstrap := buildBootstrap(b, root, filepath.Join(dir, fn.name), fn.logicalID)
			env := coldEnv(b, p, fn.logicalID)
			var took []time.Duration
			for i := 0; i < b.N; i++ {
				took = append(took, timeToNext(b, bootstrap, env))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "median-ms")
		})
	}
}

// timeToNext starts bootstrap with env against a runtime API stand-in and
// returns how long it took to ask for its first event; then it kills it.
func timeToNext(b *testing.B, bootstrap string, env map[string]string) time.Duration {
	b.Helper()
	next := make(chan time.Time, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/runtime/invocation/next") {
			select {
			case next <- time.Now():
			default:
			}
			<-r.Context().Done() // no event: the bootstrap waits until it is killed
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer api.Close()
	cmd := exec.Command(bootstrap)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(api.URL, "http://"))
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case at := <-next:
		return at.Sub(begin)
	case <-time.After(30 * time.Second):
		b.Fatalf("%s asked for no event within 30 s", bootstrap)
		return 0
	}
}

// buildBootstrap builds the bootstrap of the template function logicalID
// into dir as `sam build` does for this host, or the floor's (cmd/floor,
// with the same flags) when logicalID is "", and returns its path.
func buildBootstrap(b *testing.B, root, dir, logicalID string) string {
	b.Helper()
	bootstrap := filepath.Join(dir, "bootstrap")
	if logicalID != "" {
		if _, err := devstack.BuildFunction(context.Background(), logicalID, dir); err != nil {
			b.Fatal(err)
		}
		return bootstrap
	}
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", bootstrap, "./cmd/floor")
	cmd.Dir = root
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the floor: %v\n%s", err, out)
	}
	return bootstrap
}

// coldEnv is the environment a bootstrap gets (pipeline.Stack.Env); the
// floor gets the receiver's.
func coldEnv(b *testing.B, p *pipelinetest.Pipeline, logicalID string) map[string]string {
	b.Helper()
	env, err := p.Stack.Env(cmp.Or(logicalID, "ReceiverFunction"), nil)
	if err != nil {
		b.Fatal(err)
	}
	return env
}

// BenchmarkProcessorBatch runs batches of checkouts (three effects each,
// against the SES and Stripe stand-ins) through the processor, as Lambda's
// event source mapping delivers them, beside a floor handler that only
// leases and finishes each event. msgs/s is the figure to compare.
func BenchmarkProcessorBatch(b *testing.B) {
	for _, size := range []int{1, 10} {
		for _, target := range []string{"processor", "lease+finish"} {
			b.Run(fmt.Sprintf("batch=%d/%s", size, target), func(b *testing.B) {
				p := pipelinetest.New(b)
				src := *p.Source
				src.BatchSize = size
				if target == "lease+finish" {
					src.Function = lambdalocal.InProcess(leaseFinish(p.Inbox))
				}
				n := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					for j := 0; j < size; j++ {
						n++
						_, body := pipelinetest.Checkout(fmt.Sprintf("b%d", size), n, time.Now().Add(-time.Minute))
						p.Deliver(b, body)
					}
					b.StartTimer()
					for got := 0; got < size; {
						k, err := src.PollOnce(context.Background())
						if err != nil {
							b.Fatal(err)
						}
						got += k
					}
				}
				b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

// leaseFinish is the processor's floor: lease each message's event and
// mark it DONE, concurrently, as the processor runs a batch.
func leaseFinish(store *inbox.DynamoDB) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			resp events.SQSEventResponse
		)
		for _, m := range batch.Records {
			wg.Add(1)
			go func() {
				defer wg.Done()
				env, err := queue.ParseEnvelope(m.Body)
				if err == nil {
					owner := "floor-" + m.MessageId
					if _, err = store.Lease(ctx, env.Key, owner, time.Now(), time.Minute); err == nil {
						_, err = store.Finish(ctx, env.Key, owner, inbox.Result{Status: inbox.Done, Outcome: "floor", At: time.Now()})
					}
				}
				if err != nil {
					mu.Lock()
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return resp, nil
	}
}

func mustJSON(b *testing.B, v any) []byte {
	b.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkReceiverBesideFloor delivers fresh signed checkouts to the
// receiver's handler and to the floor's, 8 at a time, in this process on
// the same emulators with nothing else running: the receiver's own cost
// against the floor's, without the HTTP layer and without the processor
// the local stack runs beside it. deliveries/s is the figure to compare.
//
// Both targets first take benchWarmUp deliveries, interleaved and not
// timed: the tests' emulators start cold (--warmup 0), and node spends
// two to three times the CPU a request until it has compiled their code
// paths, which fell on the receiver, timed first (396 deliveries/s in
// its first count, 1 257 in its fifth, at 9f841a1).
func BenchmarkReceiverBesideFloor(b *testing.B) {
	p := pipelinetest.New(b)
	emu := devstacktest.ForTest(b)
	fl := floor.New(emu.DynamoDB(), emu.SQS(), p.Stack.Tables["InboxTable"], p.Events.URL())
	targets := []benchTarget{{"receiver", p.Receive}, {"floor", fl.Handle}}
	warmUpOnce.Do(func() {
		prefix := fmt.Sprintf("rw%d", time.Now().UnixNano()%1e6)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < benchWarmUp; i += 8 {
					for _, t := range targets {
						if err := t.deliver(prefix+t.name, i); err != nil {
							b.Error(err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
	})
	for _, target := range targets {
		b.Run(target.name, func(b *testing.B) {
			var n atomic.Int64
			prefix := fmt.Sprintf("rb%d", time.Now().UnixNano()%1e6)
			b.SetParallelism(4) // 8 senders on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := target.deliver(prefix, int(n.Add(1))); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}

// benchWarmUp is how many deliveries each target of
// BenchmarkReceiverBesideFloor takes before it is timed, once per process.
const benchWarmUp = 1500

var warmUpOnce sync.Once

// benchTarget is a webhook handler BenchmarkReceiverBesideFloor drives.
type benchTarget struct {
	name   string
	handle func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
}

// deliver sends the target checkout i of prefix, signed now, and wants 200.
func (t benchTarget) deliver(prefix string, i int) error {
	_, body := pipelinetest.Checkout(prefix, i, time.Now())
	req := events.APIGatewayV2HTTPRequest{
		Headers:        map[string]string{"stripe-signature": stripe.SignatureHeader(body, time.Now(), pipelinetest.SigningSecret)},
		PathParameters: map[string]string{"provider": "stripe"},
		Body:           string(body),
	}
	req.RequestContext.HTTP.Method = "POST"
	resp, err := t.handle(context.Background(), req)
	if err != nil || resp.StatusCode != 200 {
		return fmt.Errorf("%s answered %d %s, %v", t.name, resp.StatusCode, resp.Body, err)
	}
	return nil
}
