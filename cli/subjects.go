package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookinbox/hookinbox/internal/eventbridge"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// outputSubjectKey is the output of template.yaml with the subject key's
// secret.
const outputSubjectKey = "SubjectKeySecretArn"

// subjectFlags are the flags erase and export share.
type subjectFlags struct {
	subjects, emails stringList
	keyARN           string
	asJSON           bool
	// bridgeDLQURL is erase's --stripe-bridge-dlq-url.
	bridgeDLQURL string
}

func addSubjectFlags(fs *flag.FlagSet) *subjectFlags {
	f := &subjectFlags{}
	fs.Var(&f.subjects, "subject", "a `subject`: <provider>:<customer id> (stripe:cus_123, shopify:115310627314723954) or email:<address>; repeat for several")
	fs.Var(&f.emails, "email", "an email `address`, the same as --subject email:<address>; repeat for several")
	fs.StringVar(&f.keyARN, "subject-key-arn", "", "the subject key's Secrets Manager `ARN` (default: the stack's "+outputSubjectKey+" output; SUBJECT_KEY in the environment gives the key itself)")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	return f
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// parse returns the subjects the flags name.
func (f *subjectFlags) parse() ([]provider.Subject, error) {
	var out []provider.Subject
	for _, s := range f.subjects {
		sub, err := provider.ParseSubject(s)
		if err != nil {
			return nil, usagef("--subject: %v", err)
		}
		out = append(out, sub)
	}
	for _, e := range f.emails {
		sub := provider.EmailSubject(e)
		if sub == "" {
			return nil, usagef("--email %q is not an email address", e)
		}
		out = append(out, sub)
	}
	if len(out) == 0 {
		return nil, usagef("name a subject with --subject or --email")
	}
	return out, nil
}

// eraser resolves the target and its subject key; with queues, the
// eraser also sweeps the target's Stripe EventBridge DLQ, if it has one.
func (f *subjectFlags) eraser(ctx context.Context, sf *stackFlags, command string, stderr io.Writer, allowed func(string) bool, queues bool) (*privacy.Eraser, error) {
	t, err := sf.resolve(ctx, command, stderr, allowed, false)
	if err != nil {
		return nil, err
	}
	return f.eraserOn(ctx, t, command, stderr, queues)
}

// eraserOn is eraser on the target t.
func (f *subjectFlags) eraserOn(ctx context.Context, t *target, command string, stderr io.Writer, queues bool) (*privacy.Eraser, error) {
	keys, err := f.keys(ctx, t)
	if err != nil {
		return nil, err
	}
	hasher := privacy.NewHasher(keys)
	e := privacy.NewEraser(t.store(), hasher, nil)
	if !queues {
		return e, nil
	}
	url, events, err := f.bridgeDLQ(ctx, t)
	if err != nil || url == "" {
		return e, err
	}
	fmt.Fprintf(stderr, "hookinbox %s: also the Stripe EventBridge DLQ %s\n", command, url)
	p := eventbridge.Provider() // whose events the bridge's DLQ holds
	sq := sqs.NewFromConfig(t.cfg)
	q := privacy.EventQueue{Client: sq, URL: url, Provider: p.Name(), Finder: p}
	if events != "" {
		// Its events have not run: they are claimed into the inbox, as
		// the bridge's function would, to run once before they are erased.
		reg, err := provider.NewRegistry(p)
		if err != nil {
			return nil, err
		}
		in := intake.New(intake.Config{FromProviderAPI: true, Subjects: privacy.Subjects(reg, hasher)}, t.store(), queue.New(sq, events), nil)
		q.Parse, q.Claim = eventbridge.Parse, func(ctx context.Context, ev webhook.Event) error {
			_, err := in.Accept(ctx, ev)
			return err
		}
	}
	return e.WithQueue(q), nil
}

// bridgeDLQ returns the URL of the target's Stripe EventBridge DLQ (the
// flag's, the local stack's, or the stack's output; "" when it has none)
// and of its events queue ("" when not known).
func (f *subjectFlags) bridgeDLQ(ctx context.Context, t *target) (dlq, events string, err error) {
	switch {
	case f.bridgeDLQURL != "":
		return f.bridgeDLQURL, t.queueURL, nil
	case t.local != nil:
		return t.local.Queues[eventbridge.DLQ].URL, t.queueURL, nil
	case t.stack == "":
		return "", "", nil
	}
	out, err := stackOutputs(ctx, cloudformation.NewFromConfig(t.cfg), t.stack)
	if err != nil {
		return "", "", err
	}
	return out[eventbridge.DLQOutput], orDefault(t.queueURL, out[outputEventsQueue]), nil
}

// keys returns the target's subject keys: the local stack's, SUBJECT_KEY,
// or the secret the flag or the stack's output names.
func (f *subjectFlags) keys(ctx context.Context, t *target) (privacy.Keys, error) {
	if t.local != nil {
		return privacy.Keys{pipeline.SubjectKey}, nil
	}
	if inline, err := secrets.Parse(os.Getenv(privacy.KeyEnv)); err != nil || len(inline) > 0 {
		return inline, err
	}
	arn := f.keyARN
	if arn == "" && t.stack != "" {
		out, err := stackOutputs(ctx, cloudformation.NewFromConfig(t.cfg), t.stack)
		if err != nil {
			return nil, err
		}
		arn = out[outputSubjectKey]
	}
	if arn == "" {
		return nil, errors.New("no subject key: the stack has no " + outputSubjectKey + " output; pass --subject-key-arn or set SUBJECT_KEY")
	}
	return secrets.List(ctx, secretsmanager.NewFromConfig(t.cfg), arn)
}

// errNoOneFound: erase or export found nothing about the person; the
// command has said so, and exits 3.
var errNoOneFound = errors.New("no one found")

// noOneFound is what erase and export print when nothing is held about
// the person.
const noOneFound = "No one found: hookinbox holds nothing about this person (no event names them)."

// printJSON prints v as JSON, then returns errNoOneFound when none.
func printJSON(w io.Writer, v any, none bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	if none {
		return errNoOneFound
	}
	return nil
}

// printEvents prints the events of r, each with what is kept of it.
func printEvents(w io.Writer, r privacy.Report) {
	for _, e := range r.Events {
		fmt.Fprintf(w, "  %s  %s  %s, received %s: %s\n", e.Key, e.Type, statusWords(e.Status),
			e.ReceivedAt.Format("2006-01-02 15:04"), heldWords(e))
	}
	if r.More > 0 {
		fmt.Fprintf(w, "  and %s more\n", plural(r.More, "event"))
	}
	if r.Truncated {
		fmt.Fprintln(w, "  and maybe more: the listing stopped at its bound; hookinbox export --email or --subject lists every event")
	}
}

// statusWords is an event's status for a person.
func statusWords(s inbox.Status) string {
	switch s {
	case inbox.Received:
		return "waiting to run"
	case inbox.Processing:
		return "running"
	case inbox.Done:
		return "done"
	case inbox.Failed:
		return "failed, to be retried"
	case inbox.Dead:
		return "parked, waiting for a person"
	case inbox.Ignored:
		return "ignored"
	}
	return strings.ToLower(string(s))
}
