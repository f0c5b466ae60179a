package destination

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

var (
	// ErrRetry: the destination failed in a way that may pass (408, 429,
	// 5xx, a timeout, no connection, a throttled or failed PutEvents).
	ErrRetry = errors.New("destination failed; retried with backoff")
	// ErrRefused: the destination refused the event (a 3xx, as redirects
	// are not followed, or a 4xx other than 408, 410 and 429); it is
	// parked at once, marked webhook.Permanent.
	ErrRefused = errors.New("destination refused the event; parked")
	// ErrGone: the destination answered 410 Gone; the event is parked,
	// marked webhook.Permanent, and the destination's gone alarm fires.
	ErrGone = errors.New("destination gone (410); parked")
	// ErrTooLarge: the event is bigger than the destination takes (an
	// EventBridge entry's MaxEntrySize); it is parked, marked
	// webhook.Permanent.
	ErrTooLarge = errors.New("event too large for the destination; parked")
)

// class is what an answer means for the event.
type class int

const (
	delivered class = iota
	retried
	refused
	gone
)

// classify tells what an HTTP status means: 2xx delivered; 408, 429 and
// 5xx retried; 410 gone; every other (3xx, 4xx, 1xx) refused.
func classify(status int) class {
	switch {
	case status >= 200 && status < 300:
		return delivered
	case status == http.StatusRequestTimeout, status == http.StatusTooManyRequests, status >= 500:
		return retried
	case status == http.StatusGone:
		return gone
	}
	return refused
}

// answer is what one delivery to a destination came to.
type answer struct {
	Status     int           // the HTTP status; 0 without one (a bus, or no answer)
	Text       string        // short and free of payload data: "503 Service Unavailable", "timeout", "PutEvents ThrottlingException"
	RetryAfter time.Duration // what the destination asked for (429 and 503 Retry-After)
	Took       time.Duration // the delivery's round trip, secrets included
}

// deliveryError is a delivery that did not succeed: it wraps one of ErrRetry,
// ErrRefused, ErrGone or ErrTooLarge (and webhook.ErrPermanent for the
// last three), and names the destination and its answer.
type deliveryError struct {
	Destination string
	Answer      answer
	kind        error
	cause       error // the transport's error, if any
}

func (e *deliveryError) Error() string {
	msg := fmt.Sprintf("destination %s: %s", e.Destination, e.Answer.Text)
	if e.Answer.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %v)", e.Answer.RetryAfter)
	}
	return msg
}

// Unwrap returns the error's kind, webhook.ErrPermanent for a kind that
// parks, and the transport's error.
func (e *deliveryError) Unwrap() []error {
	errs := []error{e.kind}
	if e.kind != ErrRetry {
		errs = append(errs, webhook.ErrPermanent)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// failure returns the deliveryError of an answer of class c, its text
// cut (answerText), marked with the pause the destination asked for
// (webhook.RetryAfter): the processor retries no sooner.
func failure(name string, a answer, c class, cause error) error {
	kind := map[class]error{retried: ErrRetry, refused: ErrRefused, gone: ErrGone}[c]
	a.Text = answerText(a.Text)
	return webhook.RetryAfter(&deliveryError{Destination: name, Answer: a, kind: kind, cause: cause}, a.RetryAfter)
}

// MaxAnswerText is the most of an answer's text hookinbox keeps (in the
// delivery log, the ledger, last_error and the DLQ reason), in bytes: a
// status line is the destination's to write, so a longer one is cut.
const MaxAnswerText = 200

// answerText returns s as kept: valid UTF-8, at most MaxAnswerText bytes,
// cut on a character boundary with "…" when longer.
func answerText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxAnswerText {
		return s
	}
	const more = "…"
	cut := MaxAnswerText - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// retryAfter reads a Retry-After header (provider.RetryAfter); nothing or
// a bad value gives zero, and it is at most a day.
func retryAfter(h string, now time.Time) time.Duration {
	d, _ := provider.RetryAfter(h, now)
	return min(d, 24*time.Hour)
}

// transportText names a delivery that got no answer, without its URL.
func transportText(ctx context.Context, err error) string {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || isTimeout(err) {
		return "timeout: no answer in time"
	}
	return "no answer: " + connText(err)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
