package replay_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/webhook"
)

// outcomes returns each line's key (or message ID) → outcome.
func outcomes(s replay.Summary) map[string]string {
	got := map[string]string{}
	for _, l := range s.Events {
		id := l.Key
		if id == "" {
			id = "message"
		}
		got[id] = l.Outcome
	}
	return got
}

func TestReplayAllBringsPoisonedEventsToDoneOnce(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	keys := s.poisoned(t, 0, 10)

	t.Run("DryRunChangesNothing", func(t *testing.T) {
		sum, err := s.replay.Handle(ctx, replay.Request{All: true, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Moved != 10 || sum.Failed != 0 || sum.Skipped != 0 || !sum.DryRun {
			t.Errorf("dry run summary: %s", sum.Text())
		}
		for _, l := range sum.Events {
			if l.Outcome != replay.WouldReplay || l.Status != "DEAD" || !strings.Contains(l.Reason, "create invoice") {
				t.Errorf("dry run line %+v, want would replay a DEAD event with the invoice reason", l)
			}
		}
		if !s.AllIn(t, keys, inbox.Dead) {
			t.Errorf("statuses after a dry run: %v, want all DEAD", s.statuses(t, keys))
		}
		if got := len(pipelinetest.Peek(t, s.DLQ)); got != 10 {
			t.Errorf("DLQ after a dry run: %d messages, want 10", got)
		}
		if got := pipelinetest.Peek(t, s.Events); len(got) != 0 {
			t.Errorf("events queue after a dry run: %d messages, want none", len(got))
		}
	})

	// The cause is fixed: the Stripe stand-in creates invoices again (its
	// 10 injected failures are used up). Replay as the Lambda would.
	sum, err := s.replayFn(ctx, replay.Request{All: true, Max: 100})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Moved != 10 || sum.Dropped+sum.Skipped+sum.Failed != 0 {
		t.Fatalf("replay summary: %s", sum.Text())
	}
	if !s.AllIn(t, keys, inbox.Failed) {
		t.Errorf("statuses after the replay: %v, want FAILED (ready for the processor)", s.statuses(t, keys))
	}
	if got := len(pipelinetest.Peek(t, s.DLQ)); got != 0 {
		t.Errorf("DLQ after the replay: %d messages, want none", got)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, keys, inbox.Done) })
	s.effectsOnce(t, keys)
	for _, k := range keys {
		it, _ := s.Inbox.Get(ctx, k)
		if it.Attempts != 1 {
			t.Errorf("%s: %d attempts, want 1 (the replay's: a replay starts the counts afresh)", k, it.Attempts)
		}
	}

	// Counted once, under the events' provider; the 10 parks before it too.
	lines := s.Metrics(t)
	if got := emf.Sum(lines, metrics.Replayed, map[string]string{metrics.DimProvider: "stripe"}, time.Time{}); got != 10 {
		t.Errorf("Replayed = %v, want 10", got)
	}
	if got := emf.Sum(lines, metrics.Parked, nil, time.Time{}); got != 10 {
		t.Errorf("Parked = %v, want 10", got)
	}

	// The summary reads well in the console: JSON with counts and lines.
	b, _ := json.Marshal(sum)
	for _, want := range []string{`"moved":10`, `"outcome":"replayed"`, `"key":"stripe#evt_replay00000"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary JSON %s lacks %s", b, want)
		}
	}

	again, err := s.replay.Handle(ctx, replay.Request{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.Moved+again.Dropped+again.Skipped+again.Failed != 0 || len(again.Events) != 0 {
		t.Errorf("second replay: %s, want nothing to do", again.Text())
	}
	if got := pipelinetest.Peek(t, s.Events); len(got) != 0 {
		t.Errorf("events queue after the second replay: %d messages", len(got))
	}
	s.effectsOnce(t, keys)
}

func TestReplayByKeyOfAnEventInNoQueue(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	keys := s.poisoned(t, 100, 2)
	// Someone purged the DLQ: the events are DEAD and in no queue.
	if got := len(pipelinetest.Drain(t, s.DLQ)); got != 2 {
		t.Fatalf("drained %d DLQ messages, want 2", got)
	}
	lost, done := keys[0], keys[1]

	dry, err := s.replay.Handle(ctx, replay.Request{Keys: []string{string(lost)}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Moved != 1 || dry.Events[0].Outcome != replay.WouldReplay || !s.AllIn(t, keys, inbox.Dead) || len(pipelinetest.Peek(t, s.Events)) != 0 {
		t.Fatalf("dry run by key: %s; statuses %v", dry.Text(), s.statuses(t, keys))
	}

	sum, err := s.replay.Handle(ctx, replay.Request{Keys: []string{string(lost), string(lost)}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{string(lost): replay.Replayed}, outcomes(sum)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, keys[:1], inbox.Done) })

	// The other one is replayed and done too; then asking again for both,
	// and for an event nobody claimed, changes nothing.
	if _, err := s.replay.Handle(ctx, replay.Request{Keys: []string{string(done)}}); err != nil {
		t.Fatal(err)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, keys, inbox.Done) })
	s.effectsOnce(t, keys)
	sum, err = s.replay.Handle(ctx, replay.Request{Keys: []string{string(lost), string(done), "stripe#evt_nobody"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{string(lost): replay.Skipped, string(done): replay.Skipped, "stripe#evt_nobody": replay.Skipped}
	if diff := cmp.Diff(want, outcomes(sum)); diff != "" {
		t.Errorf("outcomes of a replay of DONE and unknown events (-want +got):\n%s", diff)
	}
	if got := pipelinetest.Peek(t, s.Events); len(got) != 0 {
		t.Errorf("events queue: %d messages, want none", len(got))
	}
}

func TestFilteredReplayLeavesTheRestAndLosesNothing(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	now := time.Now()
	claim := func(id, typ string, status inbox.Status) webhook.Key {
		t.Helper()
		ev := webhook.Event{Provider: "stripe", ID: id, Type: typ, Created: now, Raw: []byte(`{"id":"` + id + `"}`)}
		it, err := s.Inbox.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Inbox.PutPayload(ctx, it, ev.Raw); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Inbox.Lease(ctx, it.Key, "w", now, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Inbox.Finish(ctx, it.Key, "w", inbox.Result{Status: status, Error: "mapping gap", At: now}); err != nil {
			t.Fatal(err)
		}
		env := queue.Envelope{Key: it.Key, Type: typ}
		if err := s.DLQ.Park(ctx, env.Marshal(), env, "mapping gap", 1, now); err != nil {
			t.Fatal(err)
		}
		return it.Key
	}
	const checkoutType, subType = "checkout.session.completed", "customer.subscription.updated"
	a := claim("evt_filter_a", checkoutType, inbox.Dead)
	b := claim("evt_filter_b", checkoutType, inbox.Dead)
	other := claim("evt_filter_sub", subType, inbox.Dead)
	finished := claim("evt_filter_done", checkoutType, inbox.Done)
	// A second copy of a's message, and a body the processor could not read.
	if err := s.DLQ.Park(ctx, queue.Envelope{Key: a, Type: checkoutType}.Marshal(), queue.Envelope{Key: a, Type: checkoutType}, "again", 2, now); err != nil {
		t.Fatal(err)
	}
	if err := s.DLQ.Park(ctx, "not an envelope", queue.Envelope{}, "malformed: envelope", 0, now); err != nil {
		t.Fatal(err)
	}

	dry, err := s.replayFn(ctx, replay.Request{All: true, EventType: checkoutType, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Moved != 2 || dry.Dropped != 2 || dry.Skipped != 1 || dry.Unmatched != 1 || len(pipelinetest.Peek(t, s.DLQ)) != 6 || len(pipelinetest.Peek(t, s.Events)) != 0 {
		t.Fatalf("dry run: %s", dry.Text())
	}

	sum, err := s.replayFn(ctx, replay.Request{All: true, EventType: checkoutType})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Moved != 2 || sum.Dropped != 2 || sum.Skipped != 1 || sum.Failed != 0 || sum.Unmatched != 1 {
		t.Errorf("summary: %s", sum.Text())
	}
	var unreadable replay.Line
	for _, l := range sum.Events {
		if l.Key == "" {
			unreadable = l
		}
	}
	if unreadable.Outcome != replay.Skipped || unreadable.MessageID == "" || !strings.Contains(unreadable.Note, "not an envelope") || unreadable.Reason != "malformed: envelope" {
		t.Errorf("unreadable message reported as %+v", unreadable)
	}
	sent := map[webhook.Key]int{}
	for _, m := range pipelinetest.Peek(t, s.Events) {
		env, err := queue.ParseEnvelope(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		sent[env.Key]++
		if env.Type != checkoutType {
			t.Errorf("replayed envelope %+v, want type %s", env, checkoutType)
		}
	}
	if diff := cmp.Diff(map[webhook.Key]int{a: 1, b: 1}, sent); diff != "" {
		t.Errorf("sent to the events queue (-want +got):\n%s", diff)
	}
	left := map[string]bool{}
	for _, m := range pipelinetest.Peek(t, s.DLQ) {
		left[m.Body] = true
	}
	wantLeft := map[string]bool{"not an envelope": true, queue.Envelope{Key: other, Type: subType}.Marshal(): true}
	if diff := cmp.Diff(wantLeft, left); diff != "" {
		t.Errorf("left in the DLQ (-want +got):\n%s", diff)
	}
	got := s.statuses(t, []webhook.Key{a, b, other, finished})
	want := map[webhook.Key]inbox.Status{a: inbox.Failed, b: inbox.Failed, other: inbox.Dead, finished: inbox.Done}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	it, _ := s.Inbox.Get(ctx, a)
	if it.Attempts != 0 || it.LastError != "mapping gap" {
		t.Errorf("requeued item: %+v; want its reason kept, its attempts started afresh", it)
	}
}

// TestReplayByReasonReportsEachLineAsItGoes checks the Reason filter
// (one group of the console's Parked page) and Config.Progress: only
// the messages parked with that reason are replayed, each line is told
// as it is known, and the rest stay in the DLQ.
func TestReplayByReasonReportsEachLineAsItGoes(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	park := func(id, reason string) webhook.Key { return s.park(t, id, reason) }
	a, b := park("evt_reason_a", "price unknown"), park("evt_reason_b", "price unknown")
	other := park("evt_reason_c", "no customer email")
	var told []string
	h := replay.New(replay.Config{Wait: noWait, Progress: func(l replay.Line) { told = append(told, l.Key+" "+l.Outcome) }}, s.Inbox, s.Events, s.DLQ, nil)
	sum, err := h.Handle(ctx, replay.Request{All: true, Reason: "price unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Moved != 2 || sum.Unmatched != 1 {
		t.Errorf("summary: %s", sum.Text())
	}
	slices.Sort(told)
	if diff := cmp.Diff([]string{string(a) + " replayed", string(b) + " replayed"}, told); diff != "" {
		t.Errorf("progress told (-want +got):\n%s", diff)
	}
	want := map[webhook.Key]inbox.Status{a: inbox.Failed, b: inbox.Failed, other: inbox.Dead}
	if diff := cmp.Diff(want, s.statuses(t, []webhook.Key{a, b, other})); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if left := pipelinetest.Peek(t, s.DLQ); len(left) != 1 || left[0].Attributes[queue.AttrReason] != "no customer email" {
		t.Errorf("left in the DLQ: %+v, want the other reason's message", left)
	}
}

// TestReplayByAReasonOfSeveralLines: an event two destinations refused
// is parked with a reason of two lines; the console's Parked page asks
// for its group as a browser sends a form, each line break as CRLF. The
// group is replayed all the same.
func TestReplayByAReasonOfSeveralLines(t *testing.T) {
	s := newStack(t)
	key := s.park(t, "evt_two_lines", "destination a: 400 Bad Request\ndestination b: 410 Gone")
	sum, err := s.replay.Handle(context.Background(), replay.Request{All: true, Reason: "destination a: 400 Bad Request\r\ndestination b: 410 Gone"})
	if err != nil || sum.Moved != 1 || sum.Unmatched != 0 || sum.Events[0].Key != string(key) {
		t.Errorf("replay of the group = %v:\n%s", err, sum.Text())
	}
}

func TestNativeRedriveOfADeadEventIsProcessedOnce(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	keys := s.poisoned(t, 200, 3)
	// The cause is fixed; the operator uses SQS's "Start DLQ redrive" to
	// the events queue (StartMessageMoveTask), which cannot mark messages.
	s.redrive(t)
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, keys, inbox.Done) })
	s.effectsOnce(t, keys)
	if got := len(pipelinetest.Peek(t, s.DLQ)); got != 0 {
		t.Errorf("DLQ after the redrive: %d messages", got)
	}
	// A copy that arrives once more (SQS delivers at least once) is
	// acknowledged without running anything.
	for _, k := range keys {
		if err := s.Events.Send(ctx, queue.Envelope{Key: k, Type: "checkout.session.completed"}); err != nil {
			t.Fatal(err)
		}
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return len(pipelinetest.Peek(t, s.Events)) == 0 })
	s.effectsOnce(t, keys)
}

func TestRequestValidation(t *testing.T) {
	tests := []struct {
		name string
		req  replay.Request
		want string // in the error; empty for a valid request
	}{
		{"all", replay.Request{All: true, Max: 100}, ""},
		{"keys", replay.Request{Keys: []string{"stripe#evt_123"}}, ""},
		{"filtered dry run", replay.Request{All: true, EventType: "checkout.session.completed", DryRun: true}, ""},
		{"nothing", replay.Request{}, "say what to replay"},
		{"both", replay.Request{All: true, Keys: []string{"stripe#evt_1"}}, "not both"},
		{"type without all", replay.Request{EventType: "x", Keys: []string{"stripe#evt_1"}}, "eventType"},
		{"reason without all", replay.Request{Reason: "x", Keys: []string{"stripe#evt_1"}}, `"reason"`},
		{"bad key", replay.Request{Keys: []string{"evt_123"}}, `key "evt_123"`},
		{"negative max", replay.Request{All: true, Max: -1}, "max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want an error about %q", err, tt.want)
			}
		})
	}
}

// TestEventFilesAreValidRequests keeps functions/dlq-replay/event*.json,
// the console's test events, in step with Request.
func TestEventFilesAreValidRequests(t *testing.T) {
	for _, name := range []string{"event.json", "event-dry-run.json", "event-one.json", "event-type.json"} {
		t.Run(name, func(t *testing.T) {
			b, err := readFunctionFile(name)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			var req replay.Request
			if err := dec.Decode(&req); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := req.Validate(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
}

// processedAfterSend is the events queue of a replay with the processor
// running beside it: after each envelope the replay sends, the processor
// works the events queue until after reports true, before the replay reads
// the DLQ again.
type processedAfterSend struct {
	s     *stack
	t     *testing.T
	after func() bool
}

func (p processedAfterSend) Send(ctx context.Context, env queue.Envelope) error {
	if err := p.s.Events.Send(ctx, env); err != nil {
		return err
	}
	p.s.ProcessUntil(p.t, 20*time.Second, p.after)
	return nil
}

// TestEventParkedAgainDuringTheReplayKeepsItsMessage: an event that fails
// again after a replay sent it is parked again, while the replay still
// reads the DLQ; that new message stays, with its new reason, so the DLQ
// alarm and `status` still show the event, and a later replay (the cause
// fixed) brings it to DONE. A copy parked before the run is still
// dropped as superseded by the replay.
func TestEventParkedAgainDuringTheReplayKeepsItsMessage(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	key := s.poisoned(t, 300, 1)[0]
	env := queue.Envelope{Key: key, Type: "checkout.session.completed"}
	if err := s.DLQ.Park(ctx, env.Marshal(), env, "an older copy", 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The cause is not fixed: the Stripe API refuses the invoice again, now
	// with 404.
	s.Stripe.FailNext(404)
	parkedAgain := func() bool {
		it, err := s.Inbox.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return it.Status == inbox.Dead && it.Attempts == 1 && strings.Contains(it.LastError, "404")
	}
	h := replay.New(replay.Config{Wait: noWait}, s.Inbox, processedAfterSend{s, t, parkedAgain}, s.DLQ, nil)

	sum, err := h.Handle(ctx, replay.Request{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Moved != 1 || sum.Dropped != 1 || sum.Skipped != 1 || sum.Failed != 0 {
		t.Errorf("summary: %s, want 1 moved, the older copy dropped, the new park skipped", sum.Text())
	}
	for _, l := range sum.Events {
		if l.Outcome == replay.Skipped && (!strings.Contains(l.Note, "parked again") || !strings.Contains(l.Reason, "404")) {
			t.Errorf("the new park reported as %+v, want parked again with the 404", l)
		}
	}
	reasons := s.DLQReasons(t)
	if len(reasons) != 1 || !strings.Contains(reasons[key], "404") {
		t.Fatalf("DLQ after the replay holds %v, want %s with its new reason (the 404)", reasons, key)
	}
	if got := len(pipelinetest.Peek(t, s.DLQ)); got != 1 {
		t.Errorf("DLQ after the replay: %d messages, want 1", got)
	}
	if it, _ := s.Inbox.Get(ctx, key); it.Status != inbox.Dead || !strings.Contains(it.LastError, "404") {
		t.Errorf("inbox item %s (%q), want DEAD with the 404", it.Status, it.LastError)
	}

	// A later replay, the cause fixed, sends it once more and it is done.
	sum, err = s.replay.Handle(ctx, replay.Request{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{string(key): replay.Replayed}, outcomes(sum)); diff != "" {
		t.Errorf("later replay's outcomes (-want +got):\n%s", diff)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, []webhook.Key{key}, inbox.Done) })
	s.effectsOnce(t, []webhook.Key{key})
	if got := len(pipelinetest.Peek(t, s.DLQ)); got != 0 {
		t.Errorf("DLQ at the end: %d messages, want none", got)
	}
}

// TestReplayFunctionBesideARunningProcessorLosesNoPark: the dlq-replay
// function as built for Lambda, with the processor polling the events
// queue at the same time, as in AWS. However the two interleave, an event
// that fails again ends DEAD with one DLQ message carrying its new reason.
func TestReplayFunctionBesideARunningProcessorLosesNoPark(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	key := s.poisoned(t, 400, 1)[0]
	s.Stripe.FailNext(404)

	pctx, stop := context.WithCancel(ctx)
	polled := make(chan error, 1)
	go func() {
		for pctx.Err() == nil {
			if _, err := s.Source.PollOnce(pctx); err != nil && pctx.Err() == nil {
				polled <- err
				return
			}
		}
		polled <- nil
	}()
	sum, err := s.replayFn(ctx, replay.Request{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Moved != 1 || sum.Failed != 0 {
		t.Errorf("summary: %s, want the event moved", sum.Text())
	}
	var it inbox.Item
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if it, err = s.Inbox.Get(ctx, key); err != nil {
			t.Fatal(err)
		}
		if it.Status == inbox.Dead && strings.Contains(it.LastError, "404") {
			break
		}
	}
	stop()
	if err := <-polled; err != nil {
		t.Fatal(err)
	}
	if it.Status != inbox.Dead || it.Attempts != 1 || !strings.Contains(it.LastError, "404") {
		t.Fatalf("inbox item %s after %d attempts (%q), want DEAD after the replay's 1 with the 404 (parked, replayed, parked again)", it.Status, it.Attempts, it.LastError)
	}
	reasons := s.DLQReasons(t)
	if len(reasons) != 1 || !strings.Contains(reasons[key], "404") {
		t.Errorf("DLQ holds %v, want %s with its new reason (the 404)", reasons, key)
	}
}

// TestNativeRedriveOfAnEventThatFailsAgainParksItAgain: after SQS's own
// redrive, an event whose cause is not fixed is parked again by the
// processor, with its new reason, and is DEAD: nothing hides it.
func TestNativeRedriveOfAnEventThatFailsAgainParksItAgain(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	key := s.poisoned(t, 500, 1)[0]
	s.Stripe.FailNext(404)
	s.redrive(t)
	s.ProcessUntil(t, 20*time.Second, func() bool {
		it, err := s.Inbox.Get(ctx, key)
		return err == nil && it.Status == inbox.Dead && it.Attempts == 1 && strings.Contains(it.LastError, "404")
	})
	reasons := s.DLQReasons(t)
	if len(reasons) != 1 || !strings.Contains(reasons[key], "404") {
		t.Errorf("DLQ holds %v, want %s with its new reason (the 404)", reasons, key)
	}
	if got := pipelinetest.Peek(t, s.Events); len(got) != 0 {
		t.Errorf("events queue: %d messages, want none", len(got))
	}
}
