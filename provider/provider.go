package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// Provider is everything hookinbox knows about one webhook provider. A
// Provider is a plain value, safe for concurrent use.
type Provider interface {
	// Name is the {provider} segment of the webhook URL and the first
	// part of every key ("stripe" in stripe#evt_1): lower-case letters,
	// digits and '-'.
	Name() string
	// Webhook says how the receiver takes the provider's deliveries.
	Webhook() Webhook
	// Verifier builds the verifier of the provider's deliveries from its
	// current secrets (none for an Unsigned provider), reading any other
	// setting from env. It reports a secret it cannot use without naming
	// it. The receiver calls it again when the secrets change.
	Verifier(secrets []string, env *Env) (Verifier, error)
	// Processor returns how the processor fetches the provider's events
	// from its API, reading its settings from env at cold start, or the
	// zero Fetch when it fetches none. An error names every setting that
	// is missing or wrong.
	Processor(ctx context.Context, env *Env) (Fetch, error)
	// Reconciler returns the provider's reconcile source, reading its
	// settings from env at cold start, or the zero Source when it has
	// none or its settings leave it off.
	Reconciler(ctx context.Context, env *Env) (Source, error)
}

// Webhook is how a provider delivers.
type Webhook struct {
	// SecretEnv names the variable holding the provider's secrets, a
	// comma-separated list or a JSON array of strings (several while
	// rotating); SecretEnv+"_ARN"
	// names a Secrets Manager secret holding the same list. The provider
	// is enabled in the receiver when either is set. It is also the name
	// of the template's variable and the key of the local secrets.
	SecretEnv string
	// Unsigned means nothing the provider sends is signed (GoPay): the
	// secret is an API credential for the processor, the receiver never
	// reads it, and Verifier gets none.
	Unsigned bool
	// TypeUnsigned means the event type comes from a header the signature
	// does not cover (GitHub's X-GitHub-Event): whoever holds one captured
	// body can send it under any type, so the type is never a metric
	// dimension as it is.
	TypeUnsigned bool
	// IDOnly means a notification carries only the object's id (GoPay):
	// nothing in it is trusted, the processor fetches the object on every
	// attempt (Fetch), such messages run in a lane of their own, and an id
	// the provider does not know (ErrNotFound) ends IGNORED, never parked.
	IDOnly bool
	// Method is the HTTP method the provider delivers with; "" is POST.
	Method string
	// Accepted is the body answered, as text/plain, once every event of a
	// delivery is claimed; "" answers {"status": "accepted"} (or
	// "duplicate") as JSON.
	Accepted string
	// Subjects returns the people ev is about (its customer's id, every
	// email address in it), for a provider whose events name people: the
	// inbox indexes them, so a person's events can be erased or listed.
	// It reads only ev.Raw, which is verified; an IDOnly provider's
	// notification names no one, and its subjects are read from the
	// event its API serves. Nil: no subjects are indexed.
	Subjects func(ev webhook.Event) []Subject
	// PrivacyRequest, for a provider that sends privacy requests as
	// events (Shopify's compliance webhooks), says whether ev is one (ok)
	// and what it asks; err says it claims to be one (its type is a
	// privacy topic) but its signed body is not of that topic's shape,
	// so it asks nothing. The processor acts on a request whether or not
	// the business handles the event's type. Nil: the provider sends
	// none.
	PrivacyRequest func(ev webhook.Event) (req PrivacyRequest, ok bool, err error)
}

// HTTPMethod returns the HTTP method the provider delivers with.
func (w Webhook) HTTPMethod() string {
	if w.Method == "" {
		return "POST"
	}
	return w.Method
}

// Verifier authenticates one provider's deliveries and returns the events
// a delivery carries (one, or a batch), each with its key, type and
// occurrence time; or an error wrapping ErrNoSignature, ErrBadSignature,
// ... (each wraps a webhook error kind the receiver answers with).
// Header names in the request are lower case. Safe for concurrent use.
type Verifier interface {
	Verify(ctx context.Context, r webhook.Request) ([]webhook.Event, error)
}

// Fetch is what the processor needs of a provider: how it gets the
// provider's events from its API, their mode, and which are alerts.
type Fetch struct {
	// Get returns the raw event eventID as the business reads it, given
	// the notification stored for it (nil when none is: a lost payload).
	// An event the provider does not know is a permanent error
	// (webhook.Permanent), webhook.ErrNoHandler where the provider says
	// so, or, for an IDOnly provider, whose ids anyone can make up, an
	// error wrapping ErrNotFound. Nil: the provider fetches nothing.
	Get func(ctx context.Context, eventID string, stored []byte) ([]byte, error)
	// Pointer recognises a stored notification that only points at the
	// event (a Stripe thin event; every notification of an IDOnly
	// provider is one): such an event is fetched with Get on every
	// attempt and the notification is never read as content. Nil: only a
	// lost payload is fetched.
	Pointer func(stored []byte) bool
	// Type returns the type of a fetched event, read from what Get
	// returned (Mollie's payment status), for a provider whose
	// notification does not say it. Nil, or "": the notification's type.
	Type func(fetched []byte) string
	// Mode is the mode, live or test, the deployment runs the provider
	// in, for a provider whose verified events say theirs
	// (webhook.Event.Livemode). The zero Mode checks nothing.
	Mode Mode
	// Alert recognises the provider's events meant for the operator, not
	// the business (Stripe's report that it could not create events).
	// The processor logs each as an error, counts it and ends it DONE;
	// the business never sees it. Nil: there are none.
	Alert func(ev webhook.Event) (Alert, bool)
	// EventQueue is the URL of an SQS queue that holds whole events of
	// the provider outside the inbox (Stripe's EventBridge dead-letter
	// queue): an erasure takes those that name the people it erases (its
	// SubjectFinder's) into the inbox, read by QueuedEvent, where each
	// runs once before its payload goes. "": none.
	EventQueue string
	// QueuedEvent reads the event a message of EventQueue holds (an
	// EventBridge event's detail).
	QueuedEvent func(raw []byte) (webhook.Event, error)
}

// Mode is the mode a deployment runs a provider in (Fetch.Mode): an
// event of the other mode ends IGNORED before the business sees it.
type Mode int

// Modes. A provider's mode is its own, never another's: ModeUnchecked
// checks none.
const (
	ModeUnchecked Mode = iota
	ModeLive
	ModeTest
)

// Alert is what the processor tells the operator about an event meant
// for them (Fetch.Alert).
type Alert struct {
	// Message and Attrs are the error log line, as slog takes them; the
	// processor scrubs email addresses from text attributes.
	Message string
	Attrs   []any
	// Metric is the metric counted once per such event, by provider.
	Metric string
}

// ErrNotFound is wrapped by the error of an IDOnly provider's Fetch.Get
// for an object the provider does not know (HTTP 404).
var ErrNotFound = errors.New("not found at the provider")

// NotFoundError is the error of an IDOnly provider's Fetch.Get that
// counts the provider's "not found" answers for the object over claims,
// this one included (GoPay's watch list): the processor then holds a
// repeated notification of an unknown id off longer than the first.
type NotFoundError struct {
	Err   error // what the provider answered; wraps ErrNotFound
	Count int
}

func (e *NotFoundError) Error() string { return e.Err.Error() }
func (e *NotFoundError) Unwrap() error { return e.Err }

// Source is a provider's reconcile source: events it lists (List), or
// unfinished objects it fetches again until final (Sweep). Each keeps
// its own checkpoint. The zero Source is none.
type Source struct {
	List  Lister
	Sweep Sweeper
	// Lookback is how far back List's first run (no checkpoint yet)
	// starts; 0 starts from the first run. List's events are keyed as
	// their webhooks are, so one that came is a duplicate.
	Lookback time.Duration
}

// Lister lists a provider's events about a page at a time: Next returns
// those created in [from, upTo), oldest first, for some upTo in (from,
// to].
type Lister interface {
	Next(ctx context.Context, from, to time.Time) ([]webhook.Event, time.Time, error)
}

// Sweeper fetches a provider's unfinished objects again until they are
// final (GoPay payments): Sweep fetches up to its budget, hands each
// change to accept (which claims and enqueues it as the receiver would;
// webhook.ErrBusy means it is being fetched right now), stops when late
// says the run is out of time, and says what it did. It keeps its own
// place.
type Sweeper interface {
	Sweep(ctx context.Context, now time.Time, accept func(context.Context, webhook.Event) error, late func() bool) (Swept, error)
}

// Swept is what one Sweep did.
type Swept struct {
	Fetched int       // objects fetched from the provider's API
	Missed  int       // of those, changed without a notification: handed to accept
	Skipped int       // watched too long without becoming final: dropped
	Since   time.Time // when the sweep now under way started: every object watched before it was fetched since
	Events  []Line
}

// Line is one event or object a reconcile run acted on, for its report.
type Line struct {
	Key     string `json:"key"`
	Type    string `json:"type,omitempty"`
	Outcome string `json:"outcome"`
	Note    string `json:"note,omitempty"`
}

// Outcomes in Line.Outcome.
const (
	Claimed = "claimed" // an event that never arrived, now claimed and enqueued
	Failed  = "failed"  // see Note; the next run tries again
	Skipped = "skipped" // given up on; recorded
)

// checkName reports a name a provider cannot have.
func checkName(name string) error {
	if name == "" {
		return errors.New("provider: empty name")
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return fmt.Errorf("provider %q: name has %q; use lower-case letters, digits and '-'", name, c)
		}
	}
	return nil
}

// NoFetch is embedded by a provider whose events the processor never
// fetches: its Processor returns the zero Fetch.
type NoFetch struct{}

// Processor implements Provider: nothing is fetched.
func (NoFetch) Processor(context.Context, *Env) (Fetch, error) { return Fetch{}, nil }

// NoSource is embedded by a provider with no reconcile source: its
// Reconciler returns the zero Source.
type NoSource struct{}

// Reconciler implements Provider: there is no source.
func (NoSource) Reconciler(context.Context, *Env) (Source, error) { return Source{}, nil }
