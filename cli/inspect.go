package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/console"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/webhook"
)

// inspection is what inspect prints with --json.
type inspection struct {
	Item    itemView         `json:"item"`
	Effects []effects.Record `json:"effects"`
	// OpenIntents are at-most-once effects started and never recorded:
	// they may have run, and a person resolves them before a replay.
	OpenIntents []ledger.Intent `json:"open_intents"`
	// Destinations are the event's delivery attempts, by destination.
	Destinations []destination.Attempts `json:"destinations"`
	Payload      json.RawMessage        `json:"payload,omitempty"`
}

// itemView is an inbox item with the attribute names of the table.
type itemView struct {
	Key           webhook.Key  `json:"pk"`
	Status        inbox.Status `json:"status"`
	Provider      string       `json:"provider"`
	EventType     string       `json:"event_type"`
	Livemode      bool         `json:"livemode"`
	Created       *time.Time   `json:"created,omitempty"`
	ReceivedAt    *time.Time   `json:"received_at,omitempty"`
	EnqueuedAt    *time.Time   `json:"enqueued_at,omitempty"`
	PayloadSHA256 string       `json:"payload_sha256"`
	PayloadObject string       `json:"payload_object,omitempty"`
	ExpiresAt     *time.Time   `json:"expires_at,omitempty"`
	LeaseOwner    string       `json:"lease_owner,omitempty"`
	LeaseUntil    *time.Time   `json:"lease_until,omitempty"`
	Attempts      int          `json:"attempts"`
	InfraFailures int          `json:"infra_failures,omitempty"`
	LastError     string       `json:"last_error,omitempty"`
	ProcessedAt   *time.Time   `json:"processed_at,omitempty"`
	Outcome       string       `json:"outcome,omitempty"`
	RenewAfter    *time.Time   `json:"renew_after,omitempty"`
	// PayloadRemoved says the payload was erased or expired (its time in RemovedAt).
	PayloadRemoved string     `json:"payload_removed,omitempty"`
	RemovedAt      *time.Time `json:"removed_at,omitempty"`
	// EraseWhenFinished: an erasure waits for the event to finish.
	EraseWhenFinished bool `json:"erase_when_finished,omitempty"`
}

func viewOf(it inbox.Item) itemView {
	t := func(x time.Time) *time.Time {
		if x.IsZero() {
			return nil
		}
		return &x
	}
	return itemView{
		Key: it.Key, Status: it.Status, Provider: it.Provider, EventType: it.EventType, Livemode: it.Livemode,
		Created: t(it.Created), ReceivedAt: t(it.ReceivedAt), EnqueuedAt: t(it.EnqueuedAt),
		PayloadSHA256: it.PayloadSHA256, PayloadObject: it.PayloadObject, ExpiresAt: t(it.ExpiresAt),
		LeaseOwner: it.LeaseOwner, LeaseUntil: t(it.LeaseUntil), Attempts: it.Attempts, InfraFailures: it.InfraFailures, LastError: it.LastError,
		ProcessedAt: t(it.ProcessedAt), Outcome: it.Outcome, RenewAfter: t(it.RenewAfter),
		PayloadRemoved: it.PayloadRemoved, RemovedAt: t(it.RemovedAt), EraseWhenFinished: it.EraseWhenFinished,
	}
}

// inspectFlags are inspect's command line.
type inspectFlags struct {
	asJSON, payload bool
	stack           *stackFlags
	key             string // as given: a key or a bare event id
}

// parseInspect parses inspect's command line.
func parseInspect(args []string, stdout io.Writer) (inspectFlags, error) {
	fs := newFlagSet("inspect", "<provider>#<event id> [--json] [--payload] [--stack NAME]", `
Prints one event's inbox item (status, attempts, lease, outcome) and its
effect ledger (every effect that finished, with its idempotency key and
the result it recorded), and any open intent: an at-most-once effect (the
welcome email) that an attempt started and no attempt recorded, so it may
have run; the event is parked until a person resolves it, and inspect
prints the two commands that do (docs/operations.md, "The DLQ alarm
fired"), and each destination's delivery attempts and last answer. A bare
event id is looked up under every provider. It only reads: any request
that would change the stack is refused before it is sent.
`+stackHelp+`

Examples:
  hookinbox inspect 'stripe#evt_1OEa2nLkdIwHu7ixQnXZgA6E'
  hookinbox inspect 'shopify#b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' --stack shop-prod`)
	var f inspectFlags
	fs.BoolVar(&f.asJSON, "json", false, "print JSON only (item, effects and payload)")
	fs.BoolVar(&f.payload, "payload", false, "print the stored raw payload too")
	f.stack = addStackFlags(fs)
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return f, err
	}
	if len(rest) != 1 {
		return f, usagef("want one event key, <provider>#<event id>")
	}
	if _, err := webhook.ParseKey(keyShape(rest[0])); err != nil {
		return f, usagef("%v", err)
	}
	f.key = rest[0]
	return f, nil
}

func (a *app) cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseInspect(args, stdout)
	if err != nil {
		return err
	}
	t, err := f.stack.resolve(ctx, "inspect", stderr, readsOnly, false)
	if err != nil {
		return err
	}
	key, err := eventKey(ctx, t.store(), f.key, a.providers().Names())
	if err != nil {
		return err
	}
	ev, err := inspectEvent(ctx, t, key, f.asJSON || f.payload)
	if errors.Is(err, inbox.ErrNotFound) {
		return fmt.Errorf("%s is not in the inbox (table %s): was it sent to this stack? `hookinbox send` prints the keys it sends", key, t.table)
	}
	if err != nil {
		return err
	}
	if f.asJSON {
		return printInspectionJSON(stdout, ev)
	}
	printInspection(stdout, ev.Item, ev.Effects)
	printDeliveries(stdout, ev.Destinations)
	printOpenIntents(stdout, t.table, ev.OpenIntents, t.args)
	if f.payload {
		fmt.Fprintf(stdout, "\nPayload (%d bytes):\n%s\n", len(ev.Payload), printable(strings.TrimSpace(string(ev.Payload)), "\n\t"))
	}
	return nil
}

// printInspectionJSON prints ev as inspect --json does: empty lists for
// none, the payload when it is JSON.
func printInspectionJSON(w io.Writer, ev console.Event) error {
	out := inspection{Item: viewOf(ev.Item), Effects: ev.Effects, OpenIntents: ev.OpenIntents, Destinations: ev.Destinations}
	if out.Destinations == nil {
		out.Destinations = []destination.Attempts{}
	}
	if out.Effects == nil {
		out.Effects = []effects.Record{}
	}
	if out.OpenIntents == nil {
		out.OpenIntents = []ledger.Intent{}
	}
	if json.Valid(ev.Payload) {
		out.Payload = ev.Payload
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// inspectEvent reads what inspect shows of the event key on t: its item,
// its effect ledger, its delivery log and, with payload, its payload
// (nil when none is stored). No item is inbox.ErrNotFound.
func inspectEvent(ctx context.Context, t *target, key webhook.Key, payload bool) (console.Event, error) {
	store, db := t.store(), dynamodb.NewFromConfig(t.cfg)
	it, err := store.Get(ctx, key)
	if err != nil {
		return console.Event{}, err
	}
	ev := console.Event{Item: it}
	if ev.Effects, ev.OpenIntents, err = ledger.New(db, t.table, 0).Read(ctx, key); err != nil {
		return ev, err
	}
	if ev.Destinations, err = destination.NewLog(db, t.table, 0).Read(ctx, key); err != nil {
		return ev, err
	}
	if payload {
		ev.Payload, err = store.Payload(ctx, key)
		if errors.Is(err, inbox.ErrNotFound) {
			ev.Payload, err = nil, nil
		}
	}
	return ev, err
}

func printInspection(w io.Writer, it inbox.Item, recs []effects.Record) {
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05.000 MST")
	}
	fmt.Fprintf(w, "%s  %s\n\n", printable(string(it.Key), ""), printable(it.EventType, ""))
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "  %-15s %s\n", k, printable(v, ""))
		}
	}
	row("status", string(it.Status))
	row("outcome", it.Outcome)
	row("attempts", fmt.Sprint(it.Attempts))
	if it.InfraFailures > 0 {
		row("infra failures", fmt.Sprintf("%d (DynamoDB or SQS unavailable; not counted among the tries)", it.InfraFailures))
	}
	row("last error", it.LastError)
	row("created", ts(it.Created))
	row("received", ts(it.ReceivedAt))
	if !it.EnqueuedAt.IsZero() && it.EnqueuedAt.Before(it.ReceivedAt.Truncate(time.Millisecond)) {
		row("enqueued", "not yet: its message could not be sent (the next delivery or the reconciler's next run sends it)")
	} else {
		row("enqueued", ts(it.EnqueuedAt))
	}
	if !it.ProcessedAt.IsZero() {
		row("processed", ts(it.ProcessedAt))
	}
	if it.PayloadRemoved != "" {
		row("payload", it.PayloadRemoved+" at "+ts(it.RemovedAt)+" (the dedupe record stays; it cannot be replayed)")
	}
	if it.EraseWhenFinished {
		row("payload", "kept until the event finishes, then erased (an erasure waits for it)")
	}
	if !it.RenewAfter.IsZero() {
		row("renew after", ts(it.RenewAfter)+" (notifications before then are duplicates, not fetched)")
	}
	if it.LeaseOwner != "" {
		row("lease", fmt.Sprintf("%s until %s", it.LeaseOwner, ts(it.LeaseUntil)))
	}
	row("livemode", fmt.Sprint(it.Livemode))
	row("payload sha256", it.PayloadSHA256)
	if it.PayloadObject != "" {
		row("payload object", it.PayloadObject+" (in the body bucket)")
	}
	row("expires", ts(it.ExpiresAt))
	fmt.Fprintf(w, "\nEffects done: %d\n", len(recs))
	for _, r := range recs {
		result := r.Result
		if result == "" {
			result = "-"
		}
		fmt.Fprintf(w, "  %-20s %-28s key %s\n", printable(r.Effect, ""), printable(result, ""), printable(r.IdempotencyKey, ""))
	}
}

// printable returns s, which came from outside (a provider, a destination,
// business code), with every control character but those in keep, every
// bidirectional-text control and every invalid byte escaped as Go
// escapes them in a quoted string: nothing printed can move the
// terminal's cursor, recolour it, or make text read in another order.
func printable(s, keep string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) && !strings.ContainsRune(keep, r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// printOpenIntents prints the open intents of an event and, for each, the
// two writes that resolve it (docs/operations.md, "The DLQ alarm fired"),
// then the replay, with stackArgs choosing the stack.
func printOpenIntents(w io.Writer, table string, open []ledger.Intent, stackArgs string) {
	if len(open) == 0 {
		return
	}
	fmt.Fprintf(w, "\nOpen intents: %d (started, outcome unknown: may have run; the event stays parked until each is resolved)\n", len(open))
	for _, in := range open {
		started := "-"
		if !in.StartedAt.IsZero() {
			started = in.StartedAt.Local().Format("2006-01-02 15:04:05.000 MST")
		}
		fmt.Fprintf(w, "  %-20s started %s by attempt %s\n", in.Effect, started, in.Attempt)
		fmt.Fprintf(w, "  %-20s key %s\n", "", in.IdempotencyKey)
		ddbKey := fmt.Sprintf(`{"pk":{"S":%q},"sk":{"S":%q}}`, string(in.Key), "effect#"+in.Effect)
		fmt.Fprintf(w, "    find out whether it ran, where the effect acts, by its key (docs/operations.md), then either\n")
		fmt.Fprintf(w, "    it ran: record it as done (the replay skips it):\n")
		fmt.Fprintf(w, "      aws dynamodb update-item --table-name %s --key '%s' --update-expression 'REMOVE #s, attempt, started_at' --expression-attribute-names '{\"#s\":\"state\"}'\n", table, ddbKey)
		fmt.Fprintf(w, "    it did not: release it (the replay runs it):\n")
		fmt.Fprintf(w, "      aws dynamodb update-item --table-name %s --key '%s' --update-expression 'SET #s = :r' --expression-attribute-names '{\"#s\":\"state\"}' --expression-attribute-values '{\":r\":{\"S\":\"released\"}}'\n", table, ddbKey)
	}
	fmt.Fprintf(w, "    then replay it: hookinbox replay --key '%s'%s\n", open[0].Key, stackArgs)
}
