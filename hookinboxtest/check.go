package hookinboxtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// CheckOnce checks that your business's outside side effects happen once
// however the processing of an event fails, as the processor's retries
// make them happen: the question a duplicated delivery cannot ask (the
// receiver removes duplicates before the business sees them).
//
// newEvent returns a fresh event each call (p.Sample(t, provider,
// name)); count returns how many outside side effects happened so
// far, as your test's fakes count them (requests a fake CRM answered,
// say). CheckOnce first delivers one event and processes it cleanly: it
// must end DONE, and it learns the effects the business runs (n) and the
// DynamoDB writes its processing makes. Then, each with a fresh event
// delivered once, it
//
//   - fails the attempt after 0, 1, ... n effects (the next effect, or
//     the attempt's end after the last, returns a transient error without
//     running: a crash there), and lets the processor retry;
//   - loses DynamoDB's answer to each write of the processor and of your
//     business in turn (the write is applied, the connection closes
//     before the answer; the SDK sends it again).
//
// After each it processes the event until it is finished, and fails the
// test when it is not DONE or when count moved by more (an effect made
// outside the ledger, run again on the retry) or less than in the clean
// run. Events are processed one at a time; run CheckOnce on a Pipeline no
// other part of the test is delivering to. Each case takes a retry of
// about a second.
func (p *Pipeline) CheckOnce(t testing.TB, newEvent func(t testing.TB) Event, count func() int) {
	t.Helper()
	c := &checker{p: p, t: t, newEvent: newEvent, count: count}
	w0, _ := p.lost.Count()
	clean, ok := c.run("a clean run", func() {})
	if !ok {
		t.FailNow()
	}
	w1, _ := p.lost.Count()
	_, names := p.faults.state()
	if clean == 0 {
		t.Fatalf("hookinboxtest: CheckOnce: a clean run counted no side effect: count counts nothing this business does with the event, so nothing can be checked")
	}
	t.Logf("CheckOnce: a clean run of %s counted %d side effects, ran %d effects (%s) and made %d DynamoDB writes: %d cases follow",
		c.typ, clean, len(names), strings.Join(names, ", "), w1-w0, len(names)+1+w1-w0)
	c.failAtEveryEffect(names, clean)
	c.loseEveryAnswer(w1-w0, clean)
}

// checker runs CheckOnce's cases.
type checker struct {
	p        *Pipeline
	t        testing.TB
	newEvent func(t testing.TB) Event
	count    func() int
	typ      string // the clean run's event type
}

// run delivers a fresh event with the fault arm sets, processes it until
// it is finished, and returns how far count moved; ok is false when the
// event did not end DONE.
func (c *checker) run(what string, arm func()) (delta int, ok bool) {
	t, p := c.t, c.p
	t.Helper()
	ev := c.newEvent(t)
	c.typ = ev.Type
	before := c.count()
	arm()
	if got := p.Deliver(t, ev); got == "duplicate" {
		t.Fatalf("hookinboxtest: CheckOnce: %s (%s) was answered duplicate: newEvent must return a fresh event each call", ev.Key(), what)
	}
	p.ProcessUntil(t, time.Minute, func() bool { return p.AllFinished(t, []webhook.Key{ev.Key()}) })
	delta = c.count() - before
	if st := p.Status(t, ev.Key()); st != "DONE" {
		t.Errorf("%s %s: %s ended %s, want DONE (the processor's log says why)", what, ev.Type, ev.Key(), st)
		return delta, false
	}
	return delta, true
}

// failAtEveryEffect fails an attempt before each of the effects names and
// after the last, one case each.
func (c *checker) failAtEveryEffect(names []string, clean int) {
	c.t.Helper()
	for n := 0; n <= len(names); n++ {
		what := "a failure " + failureAt(names, n)
		got, ok := c.run(what, func() { c.p.faults.arm(n) })
		if fired, _ := c.p.faults.state(); !fired {
			c.t.Errorf("%s: the failure was not injected: the business ran fewer effects than in the clean run (%s)", what, strings.Join(names, ", "))
			continue
		}
		if ok {
			report(c.t, what, got, clean)
		}
	}
}

// loseEveryAnswer loses DynamoDB's answer to each of the writes a clean
// run makes, one case each.
func (c *checker) loseEveryAnswer(writes, clean int) {
	c.t.Helper()
	for i := 1; i <= writes; i++ {
		what := fmt.Sprintf("a lost answer to DynamoDB write %d of %d", i, writes)
		_, lostBefore := c.p.lost.Count()
		got, ok := c.run(what, func() { c.p.lost.LoseNth(i) })
		if _, lostAfter := c.p.lost.Count(); lostAfter == lostBefore {
			c.t.Errorf("%s: no answer was lost: the processing made fewer DynamoDB writes than in the clean run", what)
			continue
		}
		if ok {
			report(c.t, what, got, clean)
		}
	}
}

// failureAt says where an attempt that fails before effect n (of names)
// fails.
func failureAt(names []string, n int) string {
	switch {
	case len(names) == 0:
		return "at its end (it ran no effect)"
	case n == 0:
		return "before its first effect (" + names[0] + ")"
	case n == len(names):
		return "after its last effect (" + names[n-1] + "), before the outcome was written"
	}
	return fmt.Sprintf("after effect %d (%s), before %s", n, names[n-1], names[n])
}

// report fails the test when the side effects counted after a fault are
// not those of a clean run.
func report(t testing.TB, what string, got, clean int) {
	t.Helper()
	switch {
	case got > clean:
		t.Errorf("after %s and the retry, the side effects counted %d, a clean run %d: a side effect happened more than once (an outside call made outside the effect ledger, or whose idempotency key the outside system ignores)", what, got, clean)
	case got < clean:
		t.Errorf("after %s and the retry, the side effects counted %d, a clean run %d: a side effect was lost", what, got, clean)
	}
}
