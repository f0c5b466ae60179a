package pipelinetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// costRow is one line of the table TestRequestsAndCapacityPerEvent prints.
type costRow struct {
	size     int    // payload bytes asked for
	bytes    int    // payload bytes sent: a checkout is never under about 2 KB
	scenario string // new, duplicate, retried, replayed
	part     string // receiver, processor, event source, replay
	cost     pipelinetest.Cost
}

// TestRequestsAndCapacityPerEvent counts, with SDK middleware on dynalite
// and local-aws-sqs, the AWS requests and DynamoDB capacity one event costs
// in each part of the pipeline: new, delivered again (duplicate), failed
// once and retried, parked and replayed from the DLQ; at 1, 10 and 100
// KiB. The event
// is a checkout, whose three effects (ledger records and the shop's
// records) are the business's cost; the inbox's own items are "event" and
// "payload". `go test -v -run RequestsAndCapacity ./internal/local/pipelinetest`
// prints the table docs/performance.md quotes.
//
// It asserts what docs/performance.md states: every state change of an event is
// one write unit whatever the payload's size; the receiver makes one
// DynamoDB request for a new event whose payload rides in its claim
// (inbox.Claim.Inline: the 1 KiB event) and two, side by side, otherwise
// (claim, payload), one SQS request, and sends nothing for a duplicate;
// a duplicate of an inline event writes no payload; a new 1 KiB event
// costs at most 3 write units on the inbox (claim, lease, finish) and at
// most 3 SQS requests end to end (send, and Lambda's receive and delete
// of a batch of one).
func TestRequestsAndCapacityPerEvent(t *testing.T) {
	devstacktest.SkipOnMoto(t, devstacktest.ForTest(t), devstack.MotoFlatCapacity)
	p := pipelinetest.New(t)
	ctx := context.Background()
	batches := &batchRecorder{inner: p.Source.Function}
	p.Source.Function = batches
	replayFn := p.Build(t, "DlqReplayFunction", nil).(func(context.Context, replay.Request) (replay.Summary, error))

	var rows []costRow
	bodyBytes := 0 // of the events of the size being measured
	take := func(size int, scenario, part string) pipelinetest.Cost {
		c := pipelinetest.Sum(p.Meter.Take())
		rows = append(rows, costRow{size, bodyBytes, scenario, part, c})
		return c
	}
	// process runs one batch of the events queue through the processor,
	// splitting the event source's requests from the function's.
	process := func(size int, scenario string) {
		t.Helper()
		p.Meter.Take()
		for i := 0; ; i++ {
			n, err := p.Source.PollOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				break
			}
			if n > 1 || i == 20 {
				t.Fatalf("%s %d B: the events queue gave %d messages, want 1", scenario, size, n)
			}
			p.Meter.Take() // an empty poll: Lambda's pollers make those whatever the traffic
		}
		calls := p.Meter.Take()
		var fn, esm []pipelinetest.Call
		for _, c := range calls {
			if c.Service == "SQS" && (c.Operation == "ReceiveMessage" || c.Operation == "DeleteMessageBatch") {
				esm = append(esm, c)
			} else {
				fn = append(fn, c)
			}
		}
		rows = append(rows,
			costRow{size, bodyBytes, scenario, "processor", pipelinetest.Sum(fn)},
			costRow{size, bodyBytes, scenario, "event source", pipelinetest.Sum(esm)})
	}

	for i, size := range []int{1 << 10, 10 << 10, 100 << 10} {
		at := time.Now().Add(-time.Minute)
		opts := []verifytest.Option{verifytest.WithSize(size)}

		// New, then the same bytes again.
		key, body := pipelinetest.Checkout("cost", 10*i, at, opts...)
		bodyBytes = len(body)
		p.Meter.Take()
		if got := p.Deliver(t, body); got != "accepted" {
			t.Fatalf("%d B: %s, want accepted", size, got)
		}
		recv := take(size, "new", "receiver")
		process(size, "new")
		if got := p.Deliver(t, body); got != "duplicate" {
			t.Fatalf("%d B again: %s, want duplicate", size, got)
		}
		dup := take(size, "duplicate", "receiver")
		if !p.AllIn(t, []webhook.Key{key}, inbox.Done) {
			t.Fatalf("%d B: %s is not DONE", size, key)
		}
		if want := claimRequests(key, "checkout.session.completed", body); recv.DynamoDBRequests != want || recv.SQSRequests != 1 {
			t.Errorf("%d B new: receiver made %d DynamoDB and %d SQS requests (%s), want %d and 1",
				size, recv.DynamoDBRequests, recv.SQSRequests, recv.OperationList(), want)
		}
		if dup.SQSRequests != 0 {
			t.Errorf("%d B duplicate: receiver made %d SQS requests, want 0", size, dup.SQSRequests)
		}

		// A new event of a type the shop has no handler for: hookinbox's
		// own cost, without the business's.
		id := fmt.Sprintf("evt_costplain%05d", i)
		body = verifytest.StripeEvent("customer.created", id, at, opts...)
		bodyBytes = len(body)
		p.Deliver(t, body)
		recv = take(size, "new, no handler", "receiver")
		if want := claimRequests(webhook.NewKey("stripe", id), "customer.created", body); recv.DynamoDBRequests != want {
			t.Errorf("%d B new, no handler: receiver made %d DynamoDB requests (%s), want %d",
				size, recv.DynamoDBRequests, recv.OperationList(), want)
		}
		process(size, "new, no handler")
		if !p.AllIn(t, []webhook.Key{webhook.NewKey("stripe", id)}, inbox.Ignored) {
			t.Fatalf("%d B: %s is not IGNORED", size, id)
		}
		if got := p.Deliver(t, body); got != "duplicate" {
			t.Fatalf("%d B no handler again: %s, want duplicate", size, got)
		}
		dup = take(size, "duplicate, no handler", "receiver")
		if dup.SQSRequests != 0 {
			t.Errorf("%d B duplicate, no handler: receiver made %d SQS requests, want 0", size, dup.SQSRequests)
		}
		if claimRequests(webhook.NewKey("stripe", id), "customer.created", body) == 1 && (dup.WCUByItem["payload"] != 0 || dup.DynamoDBRequests != 1) {
			// The refusal carries the item (ReturnValuesOnConditionCheckFailure,
			// which emulators.js adds to dynalite): no GetItem.
			t.Errorf("%d B duplicate of an inline event: %d DynamoDB requests (%s), %g write units on a payload item; want the refused claim only",
				size, dup.DynamoDBRequests, dup.OperationList(), dup.WCUByItem["payload"])
		}

		// Failed once (the invoice call answers 500), then retried.
		key, body = pipelinetest.Checkout("cost", 10*i+1, at, opts...)
		bodyBytes = len(body)
		p.Stripe.FailNext(500)
		p.Deliver(t, body)
		take(size, "retried", "receiver")
		process(size, "retried")
		batches.makeVisible(t, p.SQS, p.Events.URL()) // the backoff has passed
		process(size, "retried")
		if !p.AllIn(t, []webhook.Key{key}, inbox.Done) {
			t.Fatalf("%d B: retried %s is not DONE", size, key)
		}

		// Parked (the invoice call answers 400), replayed by key, done.
		key, body = pipelinetest.Checkout("cost", 10*i+2, at, opts...)
		p.Stripe.FailNext(400)
		p.Deliver(t, body)
		take(size, "replayed", "receiver")
		process(size, "replayed")
		if !p.AllIn(t, []webhook.Key{key}, inbox.Dead) {
			t.Fatalf("%d B: %s is not DEAD after a permanent failure", size, key)
		}
		if sum, err := replayFn(ctx, replay.Request{All: true}); err != nil || sum.Moved != 1 {
			t.Fatalf("%d B: replay %s: %+v, %v", size, key, sum, err)
		}
		take(size, "replayed", "replay")
		process(size, "replayed")
		if !p.AllIn(t, []webhook.Key{key}, inbox.Done) {
			t.Fatalf("%d B: replayed %s is not DONE", size, key)
		}
	}

	t.Log("\n" + costTable(rows))
	t.Log("\n" + dollarTable(rows))
	checkStateChangesFlat(t, rows)
	for _, scenario := range []string{"new", "new, no handler"} {
		var sqsRequests int
		var inboxUnits float64
		for _, r := range rows {
			if r.size == 1<<10 && r.scenario == scenario {
				sqsRequests += r.cost.SQSRequests
				inboxUnits += r.cost.WCUByItem["event"] + r.cost.WCUByItem["payload"]
			}
		}
		if sqsRequests > 3 {
			t.Errorf("%s 1 KiB event: %d SQS requests end to end, want at most 3", scenario, sqsRequests)
		}
		// The 1 KiB event is the one without a handler: the checkout
		// cannot be under 2.9 KB.
		if scenario == "new, no handler" && inboxUnits > 3 {
			t.Errorf("%s 1 KiB event: %g write units on the inbox end to end, want at most 3 (claim, lease, finish)", scenario, inboxUnits)
		}
	}
}

// claimRequests is how many DynamoDB requests the receiver makes for a
// new event: the claim, and a payload write unless the payload rides in
// the claim (the same choice the receiver makes). Its subjects ride on
// the claim: the processor writes their index entries.
func claimRequests(key webhook.Key, typ string, body []byte) int {
	ev := webhook.Event{Provider: key.Provider(), ID: key.EventID(), Type: typ, Raw: body}
	if (inbox.Claim{Event: ev, At: time.Now(), TTL: inbox.DefaultTTL}).Inline() {
		return 1
	}
	return 2
}

// TestAckPathIsTheClaimAndTheSend meters the receiver as deployed, a
// subject key set (the template always sets one): 50 new checkouts, each
// naming a customer and an email, cost 50 PutItem and 50 SendMessage and
// nothing else; the same 50 again, 50 refused PutItem and nothing else.
// The subjects ride on the claims; the processor indexes them, so an
// erasure finds every one of the 50, before and after it ran.
func TestAckPathIsTheClaimAndTheSend(t *testing.T) {
	p := pipelinetest.New(t)
	ctx := context.Background()
	at := time.Now().Add(-time.Minute)
	var keys []webhook.Key
	var bodies [][]byte
	for i := range 50 {
		key, body := pipelinetest.Checkout("ack", i, at)
		keys, bodies = append(keys, key), append(bodies, body)
	}
	deliver := func(want string) map[string]int {
		t.Helper()
		p.Meter.Take()
		for _, b := range bodies {
			if got := p.Deliver(t, b); got != want {
				t.Fatalf("delivery: %s, want %s", got, want)
			}
		}
		return pipelinetest.Sum(p.Meter.Take()).Operations
	}
	if diff := cmp.Diff(map[string]int{"DynamoDB.PutItem": 50, "SQS.SendMessage": 50}, deliver("accepted")); diff != "" {
		t.Errorf("receiver's requests for 50 new events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"DynamoDB.PutItem": 50}, deliver("duplicate")); diff != "" {
		t.Errorf("receiver's requests for 50 duplicates (-want +got):\n%s", diff)
	}
	e := privacy.NewEraser(p.Inbox, privacy.NewHasher(privacy.Keys{pipeline.SubjectKey}), nil)
	for _, when := range []string{"before", "after"} {
		if when == "after" {
			p.ProcessUntil(t, time.Minute, func() bool { return p.AllIn(t, keys, inbox.Done) })
			if n := pipelinetest.Sum(p.Meter.Take()).Operations["DynamoDB.BatchWriteItem"]; n != 50 {
				t.Errorf("the processor wrote the index entries in %d requests, want 50", n)
			}
		}
		for i, k := range keys {
			rep, err := e.Export(ctx, []provider.Subject{provider.EmailSubject(fmt.Sprintf("buyer%d@example.com", i))})
			if err != nil || len(rep.Events) != 1 || rep.Events[0].Key != k {
				t.Fatalf("%s processing, export of %s's buyer: %+v, %v", when, k, rep, err)
			}
		}
	}
}

// checkStateChangesFlat checks what the inbox's own items cost as the
// payload grows. With the payload in its own item (10 and 100 KiB), and
// for the 1 KiB event that rides in a one-unit claim (the "no handler"
// scenarios), each write of the event item costs one unit whatever the
// size. The 1 KiB checkout (2.9 KB: it cannot be smaller) rides in a
// two-unit claim, because that costs no more: its new event's writes,
// claim to finish, cost at most what one-unit writes plus a payload item
// of its size would (inbox's cost rule; a retried event pays one unit
// more for each write past the three it counts on).
func checkStateChangesFlat(t *testing.T, rows []costRow) {
	t.Helper()
	bySize := map[string]map[int]float64{}
	total := map[string]map[int]float64{} // event + payload items, by scenario
	bytesOf := map[string]map[int]int{}
	for _, r := range rows {
		k := r.scenario + " " + r.part
		if bySize[k] == nil {
			bySize[k] = map[int]float64{}
		}
		bySize[k][r.size] += r.cost.WCUByItem["event"]
		if total[r.scenario] == nil {
			total[r.scenario], bytesOf[r.scenario] = map[int]float64{}, map[int]int{}
		}
		total[r.scenario][r.size] += r.cost.WCUByItem["event"] + r.cost.WCUByItem["payload"]
		bytesOf[r.scenario][r.size] = r.bytes
	}
	for k, m := range bySize {
		if m[10<<10] != m[100<<10] || (strings.Contains(k, "no handler") && m[1<<10] != m[10<<10]) {
			t.Errorf("%s: write units on the event item %v grow with the payload", k, m)
		}
	}
	for _, scenario := range []string{"new", "new, no handler"} {
		flat := 0.0 // the event item's units at 10 KiB: one a write
		for k, m := range bySize {
			if strings.HasPrefix(k, scenario+" ") && !strings.Contains(strings.TrimPrefix(k, scenario+" "), "handler") {
				flat += m[10<<10]
			}
		}
		apart := flat + float64((bytesOf[scenario][1<<10]+1023)/1024)
		if got := total[scenario][1<<10]; got > apart {
			t.Errorf("%s, %d B: %g write units on the inbox's items, want at most %g (one-unit writes and a payload item)",
				scenario, bytesOf[scenario][1<<10], got, apart)
		}
	}
}

// costTable formats rows as a Markdown table.
func costTable(rows []costRow) string {
	var b strings.Builder
	b.WriteString("| payload | bytes | event | part | DynamoDB requests | RCU | WCU: event item | WCU: payload item | WCU: ledger + shop (business) | SQS requests | requests |\n")
	b.WriteString("| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range rows {
		c := r.cost
		fmt.Fprintf(&b, "| %d KiB | %d | %s | %s | %d | %g | %g | %g | %g | %d | %s |\n",
			r.size>>10, r.bytes, r.scenario, r.part, c.DynamoDBRequests, c.RCU,
			c.WCUByItem["event"], c.WCUByItem["payload"], c.WCUByItem["ledger"]+c.WCUByItem["shop"],
			c.SQSRequests, c.OperationList())
	}
	return b.String()
}

// batchRecorder is the event source's function, keeping the receipt
// handles of the last batch so a test can end a message's backoff.
type batchRecorder struct {
	inner lambdalocal.Invoker
	last  []string
}

func (b *batchRecorder) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var batch events.SQSEvent
	if err := json.Unmarshal(payload, &batch); err != nil {
		return nil, err
	}
	b.last = b.last[:0]
	for _, m := range batch.Records {
		b.last = append(b.last, m.ReceiptHandle)
	}
	return b.inner.Invoke(ctx, payload)
}

// makeVisible makes the last batch's messages visible again at once, as
// their backoff running out would, through the test's own (unmetered)
// client.
func (b *batchRecorder) makeVisible(t *testing.T, client *sqs.Client, queueURL string) {
	t.Helper()
	for _, h := range b.last {
		if _, err := client.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{
			QueueUrl: &queueURL, ReceiptHandle: &h, VisibilityTimeout: 0,
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// AWS list prices, us-east-1, on-demand (docs/performance.md says where
// each comes from and when it was read).
const (
	lambdaRequest  = 0.20 / 1e6   // per invocation
	lambdaGBSecond = 0.0000133334 // arm64, first tier
	httpAPIRequest = 1.00 / 1e6   // HTTP API, first 300 million a month, per 512 KB
	writeUnit      = 0.625 / 1e6  // DynamoDB on-demand write request unit
	readUnit       = 0.125 / 1e6  // DynamoDB on-demand read request unit
	sqsRequest     = 0.40 / 1e6   // SQS standard, per 64 KB chunk
	memoryGB       = 256.0 / 1024 // template.yaml Globals MemorySize
	receiverSecs   = 0.020        // assumed billed duration of one delivery
	processorSecs  = 0.030        // assumed billed duration per message
	logBytes       = 1500         // assumed log + metric bytes per event
	logGB          = 0.50 / (1 << 30)
)

// dollarTable prices every event kind per million events from the counted
// requests, at batches of one (quiet traffic) and of ten (busy traffic).
func dollarTable(rows []costRow) string {
	type key struct {
		size     int
		scenario string
	}
	var order []key
	sums := map[key]map[string]pipelinetest.Cost{}
	bytes := map[key]int{}
	for _, r := range rows {
		k := key{r.size, r.scenario}
		if sums[k] == nil {
			sums[k] = map[string]pipelinetest.Cost{}
			order = append(order, k)
		}
		sums[k][r.part] = sums[k][r.part].Add(r.cost)
		bytes[k] = r.bytes
	}
	var b strings.Builder
	b.WriteString("| payload | event | DynamoDB WRU | RRU | SQS requests (batch 1) | $ per million, batch 1 | $ per million, batch 10 |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, k := range order {
		parts := sums[k]
		var all pipelinetest.Cost
		for _, c := range parts {
			all = all.Add(c)
		}
		esm := float64(parts["event source"].SQSRequests)
		invocations := 0.0 // processor invocations, at batch 1
		for _, r := range rows {
			if r.size == k.size && r.scenario == k.scenario && r.part == "processor" {
				invocations++
			}
		}
		deliveries := 0.0
		for _, r := range rows {
			if r.size == k.size && r.scenario == k.scenario && r.part == "receiver" {
				deliveries++
			}
		}
		fixed := deliveries*(httpAPIRequest+lambdaRequest+memoryGB*receiverSecs*lambdaGBSecond) +
			invocations*memoryGB*processorSecs*lambdaGBSecond +
			all.WCU*writeUnit + all.RCU*readUnit +
			(float64(all.SQSRequests)-esm)*sqsRequest + logBytes*logGB
		batch1 := fixed + invocations*lambdaRequest + esm*sqsRequest
		batch10 := fixed + invocations*lambdaRequest/10 + esm*sqsRequest/10
		fmt.Fprintf(&b, "| %d B | %s | %g | %g | %d | %.2f | %.2f |\n",
			bytes[k], k.scenario, all.WCU, all.RCU, all.SQSRequests, batch1*1e6, batch10*1e6)
	}
	return b.String()
}
