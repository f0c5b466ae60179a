package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// Target is a pipeline Run delivers to and Snapshot reads back.
type Target interface {
	// Deliver sends one signed delivery of ev, as its provider would,
	// and returns the HTTP status answered (an error when none was).
	Deliver(ctx context.Context, ev Event) (int, error)
	// Requeue sends one more message for ev to the events queue, as
	// SQS's at-least-once delivery sometimes does.
	Requeue(ctx context.Context, ev Event) error
	// Busy returns how many messages the events queue holds (visible,
	// in flight or delayed) and how many events are unfinished (RECEIVED,
	// PROCESSING or FAILED). Zero and zero is quiet.
	Busy(ctx context.Context) (messages, unfinished int, err error)
	// Snapshot reads what the events of keys left behind.
	Snapshot(ctx context.Context, keys []webhook.Key) (Snapshot, error)
}

// Config says how Run delivers. The zero value is the reference run: each
// event once, in corpus order, from one sender, no extra queue messages.
type Config struct {
	Dup         int           // deliveries of each event; default 1
	Shuffle     bool          // deliver in a random order, not the corpus order
	Concurrency int           // concurrent senders; default 1
	DelayJitter time.Duration // each delivery first waits a random time below this
	QueueDups   bool          // after an accepted delivery, send one more queue message for it
	Seed        uint64        // seeds the order and the jitter; runs with one seed shuffle alike
	QuietWithin time.Duration // how long to wait for quiet after the last answer; default 10 min
	// Progress, when set, is told every 10 s while Run waits for quiet
	// how busy the pipeline still is.
	Progress func(messages, unfinished int)
}

// Stats is what a run did.
type Stats struct {
	Events      int           // distinct events
	Deliveries  int           // HTTP deliveries made, retries included
	Accepted    int           // answered 200 accepted (or any 2xx)
	Retried     int           // deliveries answered 5xx or not at all, then sent again
	Refused     map[int]int   // final answers 4xx, by status
	Undelivered int           // deliveries still unanswered 2xx/4xx after every retry
	QueueCopies int           // extra messages sent to the events queue
	ToQuiet     time.Duration // from the last answer to a quiet pipeline
	Elapsed     time.Duration // the whole run
}

// Retries of a delivery answered 5xx or not at all: Stripe retries for
// three days with a growing delay; Run does it quickly, a bounded number
// of times.
const (
	maxAttempts   = 8
	firstBackoff  = 50 * time.Millisecond
	maxBackoff    = 2 * time.Second
	quietPoll     = 200 * time.Millisecond
	quietChecks   = 3 // consecutive quiet readings before the pipeline counts as quiet
	progressEvery = 10 * time.Second
)

// errNotQuiet is returned when the pipeline is still busy after
// Config.QuietWithin.
var errNotQuiet = errors.New("the pipeline did not get quiet")

// Run delivers events to t as cfg says and waits until t is quiet. An
// error means the run could not be completed (ctx ended, the target could
// not be read, errNotQuiet); what the deliveries answered is in Stats.
func Run(ctx context.Context, t Target, events []Event, cfg Config) (Stats, error) {
	begin := time.Now()
	cfg = cfg.withDefaults()
	st := Stats{Events: len(events), Refused: map[int]int{}}
	if err := deliverAll(ctx, t, plan(events, cfg), cfg, &st); err != nil {
		return st, err
	}
	answered := time.Now()
	if err := waitQuiet(ctx, t, cfg.QuietWithin, cfg.Progress); err != nil {
		return st, err
	}
	st.ToQuiet = time.Since(answered)
	st.Elapsed = time.Since(begin)
	return st, nil
}

// withDefaults returns c with the default of each setting not set.
func (c Config) withDefaults() Config {
	if c.Dup < 1 {
		c.Dup = 1
	}
	if c.Concurrency < 1 {
		c.Concurrency = 1
	}
	if c.QuietWithin <= 0 {
		c.QuietWithin = 10 * time.Minute
	}
	return c
}

// job is one delivery of an event, after a delay.
type job struct {
	ev    Event
	delay time.Duration
}

// plan returns the deliveries cfg asks for: each event cfg.Dup times,
// each with its jitter, shuffled when asked, as cfg.Seed says.
func plan(events []Event, cfg Config) []job {
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	var jobs []job
	for range cfg.Dup {
		for _, ev := range events {
			var d time.Duration
			if cfg.DelayJitter > 0 {
				d = time.Duration(rng.Int64N(int64(cfg.DelayJitter)))
			}
			jobs = append(jobs, job{ev, d})
		}
	}
	if cfg.Shuffle {
		rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	}
	return jobs
}

// deliverAll makes jobs' deliveries, cfg.Concurrency at a time, and
// counts them in st. It returns ctx's error, or the first of a delivery.
func deliverAll(ctx context.Context, t Target, jobs []job, cfg Config, st *Stats) error {
	var mu sync.Mutex
	var firstErr error
	work := make(chan job)
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() {
			for j := range work {
				if j.delay > 0 {
					select {
					case <-ctx.Done():
						continue
					case <-time.After(j.delay):
					}
				}
				d := deliver(ctx, t, j.ev, cfg.QueueDups)
				mu.Lock()
				st.count(d)
				if d.err != nil && firstErr == nil {
					firstErr = d.err
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return firstErr
}

// count adds one delivery's outcome.
func (st *Stats) count(d delivered) {
	st.Deliveries += d.attempts
	st.Retried += d.attempts - 1
	st.QueueCopies += d.copies
	switch {
	case d.status >= 200 && d.status < 300:
		st.Accepted++
	case d.status >= 400 && d.status < 500:
		st.Refused[d.status]++
	default:
		st.Undelivered++
	}
}

// delivered is one delivery's outcome after its retries.
type delivered struct {
	status   int // the last status answered, 0 for none
	attempts int
	copies   int   // queue copies sent
	err      error // a Requeue that failed
}

// deliver sends ev until it is answered 2xx or 4xx, at most maxAttempts
// times, then sends one extra queue message if asked and it was accepted.
func deliver(ctx context.Context, t Target, ev Event, queueDup bool) delivered {
	var d delivered
	backoff := firstBackoff
	for d.attempts < maxAttempts && ctx.Err() == nil {
		d.attempts++
		status, err := t.Deliver(ctx, ev)
		d.status = status
		if err == nil && status < 500 {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
	if queueDup && d.status >= 200 && d.status < 300 {
		if err := t.Requeue(ctx, ev); err != nil {
			d.err = fmt.Errorf("duplicate the queue message of %s: %w", ev.Key(), err)
		} else {
			d.copies++
		}
	}
	return d
}

// waitQuiet polls t until it reports nothing queued and nothing
// unfinished quietChecks times in a row, or within has passed.
func waitQuiet(ctx context.Context, t Target, within time.Duration, progress func(int, int)) error {
	deadline := time.Now().Add(within)
	told := time.Now()
	quiet := 0
	var msgs, unfinished int
	for quiet < quietChecks {
		var err error
		msgs, unfinished, err = t.Busy(ctx)
		if err != nil {
			return fmt.Errorf("wait for quiet: %w", err)
		}
		if msgs == 0 && unfinished == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if progress != nil && time.Since(told) >= progressEvery {
			progress(msgs, unfinished)
			told = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w within %s: %d messages queued, %d events unfinished", errNotQuiet, within, msgs, unfinished)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(quietPoll):
		}
	}
	return nil
}
