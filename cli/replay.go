package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/webhook"
)

// keyList collects repeated --key flags: keys, or bare event ids
// (eventKey).
type keyList []string

func (k *keyList) String() string { return strings.Join(*k, ",") }

func (k *keyList) Set(s string) error {
	*k = append(*k, s)
	return nil
}

// eventKey returns s as an event key: <provider>#<event id> as given, or
// a bare event id looked up in store under every provider of
// providers, which must find it under exactly one.
func eventKey(ctx context.Context, store interface {
	Get(context.Context, webhook.Key) (inbox.Item, error)
}, s string, providers []string) (webhook.Key, error) {
	if strings.Contains(s, "#") {
		return webhook.ParseKey(s)
	}
	var found []string
	for _, name := range providers {
		k, err := webhook.ParseKey(name + "#" + s)
		if err != nil {
			return "", usagef("%q: %v", s, err)
		}
		switch _, err := store.Get(ctx, k); {
		case err == nil:
			found = append(found, k.String())
		case !errors.Is(err, inbox.ErrNotFound):
			return "", err
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no event %s in the inbox under any provider; give its key, <provider>#%s", s, s)
	case 1:
		return webhook.Key(found[0]), nil
	}
	return "", fmt.Errorf("event id %s is in the inbox under %d providers: give its key, one of %s", s, len(found), strings.Join(found, ", "))
}

// keyShape returns s for checking its shape as a key: a bare event id is
// checked under a stand-in provider name, as it is looked up later.
func keyShape(s string) string {
	if strings.Contains(s, "#") {
		return s
	}
	return "any#" + s
}

// replayFlags are replay's command line.
type replayFlags struct {
	req    replay.Request // Keys as given: keys or bare event ids
	asJSON bool
	stack  *stackFlags
}

// parseReplay parses replay's command line.
func parseReplay(args []string, stdout io.Writer) (replayFlags, error) {
	fs := newFlagSet("replay", "(--all [--type T] [--reason R] [--max N] | --key K [--key K ...]) [--dry-run] [--json] [--stack NAME]", `
Sends parked events back to the processor, exactly as the dlq-replay
function does (internal/replay): each event's claim is put back to FAILED
(attempts and last error kept) and its message sent to the events queue; a
DLQ message is deleted only after its copy was sent, or when its event is
already DONE. Messages that are not envelopes are reported and left in the
DLQ. --dry-run reports what would happen and changes nothing: it reads the
inbox and the DLQ's messages (each is visible again when it ends) and
sends, deletes and writes nothing.
`+stackHelp+`

Examples:
  hookinbox replay --all --dry-run                  what would the DLQ replay do?
  hookinbox replay --all --max 100                  move up to 100 messages back
  hookinbox replay --all --type checkout.session.completed
  hookinbox replay --key stripe#evt_123 --key evt_456
  hookinbox replay --all --dry-run --stack shop-prod   the same on a deployed stack`)
	var f replayFlags
	fs.BoolVar(&f.req.All, "all", false, "replay the DLQ (up to --max messages)")
	fs.IntVar(&f.req.Max, "max", 0, "with --all: the most DLQ messages to handle (default 100)")
	var keys keyList
	fs.Var(&keys, "key", "replay this event (`provider#id`, or a bare event id, looked up under every provider), whether or not it is in the DLQ; repeatable")
	fs.StringVar(&f.req.EventType, "type", "", "with --all: only DLQ messages of this event `type`")
	fs.StringVar(&f.req.Reason, "reason", "", "with --all: only DLQ messages parked with exactly this `reason` (their error_reason, as replay --dry-run prints it)")
	fs.BoolVar(&f.req.DryRun, "dry-run", false, "report only; change nothing")
	fs.BoolVar(&f.asJSON, "json", false, "print the summary as JSON")
	f.stack = addStackFlags(fs)
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return f, err
	}
	f.req.Keys = append(keys, rest...)
	check := f.req
	check.Keys = nil
	for _, k := range f.req.Keys {
		check.Keys = append(check.Keys, keyShape(k))
	}
	if err := check.Validate(); err != nil {
		return f, usagef("%s", strings.TrimPrefix(err.Error(), "replay request: "))
	}
	return f, nil
}

func (a *app) cmdReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseReplay(args, stdout)
	if err != nil {
		return err
	}
	var allowed func(string) bool
	if f.req.DryRun {
		allowed = readsAndPeeks
	}
	t, err := f.stack.resolve(ctx, "replay", stderr, allowed, true)
	if err != nil {
		return err
	}
	if t.queueURL == "" || t.dlqURL == "" {
		return fmt.Errorf("the stack names no events queue or DLQ; restart hookinbox dev")
	}
	req := f.req
	req.Keys = nil
	for _, k := range f.req.Keys {
		key, err := eventKey(ctx, t.store(), k, a.providers().Names())
		if err != nil {
			return err
		}
		req.Keys = append(req.Keys, key.String())
	}
	sum, err := t.replayer(replay.Config{}).Handle(ctx, req)
	if err != nil {
		return err
	}
	return printReplay(stdout, stderr, sum, f.asJSON)
}

// printReplay prints the summary of a replay, as JSON when asJSON is set;
// it fails when a message failed.
func printReplay(stdout, stderr io.Writer, sum replay.Summary, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		fmt.Fprint(stdout, sum.Text())
	}
	if sum.Failed > 0 {
		return fmt.Errorf("%d failed; they are left in the DLQ (see the notes above)", sum.Failed)
	}
	if sum.Stopped != "" && !strings.HasPrefix(sum.Stopped, "reached max") {
		fmt.Fprintf(stderr, "hookinbox replay: stopped early: %s\n", sum.Stopped)
	}
	return nil
}
