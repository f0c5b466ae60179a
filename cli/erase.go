package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

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

func (l *stringList) String() string     { return strings.Join(*l, ",") }
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

func cmdErase(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("erase", "--subject <provider>:<customer id> | --email <address> [--dry-run] [--by WHO] [--stack NAME]", `
Erases what hookinbox keeps about a person: the contents of every event
about them (the event as delivered, wherever it is stored, and what its
processing recorded). An event that has not finished yet (waiting,
running, failed and to be retried, or parked) keeps its contents until
it has run once more, so no payment or order is lost; then they are
erased. Each event's key, status and dates stay until the event
expires, so a provider's repeated delivery is recognised and runs
nothing. An audit record notes who asked, when, and a keyed hash of the
person, never the person. With StripeEventBridgeSource it also deletes
the Stripe events naming the person from the Stripe EventBridge
dead-letter queue. --dry-run lists what would go.

Your business's own records about the person (its tables, emails sent,
CRM) are not hookinbox's: erase them yourself (docs/security.md,
"Personal data").

Exit status: 0 when something was found (erased, or waiting to be),
3 when hookinbox holds nothing about the person, 2 for a usage error,
1 for any other failure.
`+stackHelp)
	sf := addStackFlags(fs)
	f := addSubjectFlags(fs)
	dryRun := fs.Bool("dry-run", false, "list what would be erased; change nothing")
	by := fs.String("by", "", "who asked, for the audit record (default cli:<your user name>)")
	fs.StringVar(&f.bridgeDLQURL, "stripe-bridge-dlq-url", "", "the Stripe EventBridge DLQ `URL` (default: the stack's "+eventbridge.DLQOutput+" output, when it has one)")
	if _, err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	subjects, err := f.parse()
	if err != nil {
		return err
	}
	who, err := requester(*by)
	if err != nil {
		return err
	}
	var allowed func(string) bool
	if *dryRun {
		allowed = readsAndPeeks
	}
	e, err := f.eraser(ctx, sf, "erase", stderr, allowed, true)
	if err != nil {
		return err
	}
	rep, err := e.Erase(ctx, privacy.Request{Subjects: subjects, By: who, DryRun: *dryRun})
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(stdout, rep, rep.Found()+rep.Queued == 0)
	}
	return printErasure(stdout, rep, *dryRun)
}

// requester returns who asked for an erasure, for its audit record: by,
// or "cli:" and the user running the command. Without either it is a
// usage error: the record must not say "unknown".
func requester(by string) (string, error) {
	if by = strings.TrimSpace(by); by != "" {
		return by, nil
	}
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		return "", usagef("say who asked for the erasure with --by (no user name found for the audit record)")
	}
	return "cli:" + name, nil
}

func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "--subject <provider>:<customer id> | --email <address> | --requests [--json] [--stack NAME]", `
Lists what hookinbox holds about a person, for a data request: every
event about them, its provider, type, status and dates, what is kept of
it and until when, or that it was erased or deleted after its retention.
It only reads.

--requests lists instead the data requests providers sent (Shopify's
customers/data_request): when, which request, and what hookinbox held
about the person then. Your business's own records about the person are
not hookinbox's: answer for them yourself.

Exit status: 0 when something was found, 3 when hookinbox holds nothing
about the person, 2 for a usage error, 1 for any other failure.
`+stackHelp)
	sf := addStackFlags(fs)
	f := addSubjectFlags(fs)
	requests := fs.Bool("requests", false, "list the data requests providers sent, with what hookinbox held about each person")
	if _, err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *requests {
		return listDataRequests(ctx, sf, f.asJSON, stdout, stderr)
	}
	subjects, err := f.parse()
	if err != nil {
		return err
	}
	e, err := f.eraser(ctx, sf, "export", stderr, readsOnly, false)
	if err != nil {
		return err
	}
	rep, err := e.Export(ctx, subjects)
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(stdout, rep, rep.Found() == 0)
	}
	return printHeld(stdout, rep)
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

// printErasure prints what an erasure did (or, dryRun, would do) in
// plain words.
func printErasure(w io.Writer, r privacy.Report, dryRun bool) error {
	if r.Found()+r.Queued == 0 {
		fmt.Fprintln(w, noOneFound)
		return errNoOneFound
	}
	fmt.Fprintf(w, "hookinbox found this person in %s:\n", plural(r.Found(), "event"))
	for _, e := range r.Events {
		fmt.Fprintf(w, "  %s  %s  %s, received %s: %s\n", e.Key, e.Type, statusWords(e.Status),
			e.ReceivedAt.Format("2006-01-02 15:04"), erasedWords(e, dryRun))
	}
	switch n := waiting(r); {
	case n == 1:
		fmt.Fprintln(w, "1 event is not finished: what it holds stays until it has run once more, then it is erased. A parked event runs again when you replay it.")
	case n > 1:
		fmt.Fprintf(w, "%d events are not finished: what each holds stays until it has run once more, then it is erased. A parked event runs again when you replay it.\n", n)
	}
	if r.Queued > 0 {
		verb := "Also took"
		if dryRun {
			verb = "Would also take"
		}
		fmt.Fprintf(w, "%s %s naming this person out of the Stripe EventBridge dead-letter queue: they had not run, so each runs once, then it is erased.\n",
			verb, plural(r.Queued, "Stripe event"))
	}
	fmt.Fprintln(w, "Each event's key, status and dates stay (no personal data) until the event expires, so a repeated delivery is recognised.")
	fmt.Fprintln(w, "Your business's own records about this person (its tables, emails, CRM) are yours to erase.")
	return nil
}

// printHeld prints what an export found in plain words.
func printHeld(w io.Writer, r privacy.Report) error {
	if r.Found() == 0 {
		fmt.Fprintln(w, noOneFound)
		return errNoOneFound
	}
	fmt.Fprintf(w, "hookinbox holds data about this person in %s:\n", plural(r.Found(), "event"))
	printEvents(w, r)
	fmt.Fprintln(w, "Your business's own records about this person are not listed here.")
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

// waiting counts the events of r an erasure waits for.
func waiting(r privacy.Report) int {
	n := 0
	for _, e := range r.Events {
		if e.Waiting {
			n++
		}
	}
	return n
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

// heldWords says what is kept of e.
func heldWords(e privacy.EventReport) string {
	var kept []string
	if slices.ContainsFunc(e.Where, func(w string) bool { return !strings.HasPrefix(w, "effect ") }) {
		kept = append(kept, "the event as delivered")
	}
	if n := len(slices.DeleteFunc(slices.Clone(e.Where), func(w string) bool { return !strings.HasPrefix(w, "effect ") })); n > 0 {
		kept = append(kept, plural(n, "result")+" of its processing")
	}
	switch {
	case len(kept) > 0 && e.Waiting:
		return "keeps " + strings.Join(kept, " and ") + ", to be erased once it has finished"
	case len(kept) > 0:
		return "keeps " + strings.Join(kept, " and ") + " until " + e.ExpiresAt.Format("2006-01-02") + " at the latest"
	case e.Removed == inbox.RemovedErased:
		return "erased"
	case e.Removed == inbox.RemovedExpired:
		return "deleted after its retention"
	}
	return "nothing kept"
}

// erasedWords says what an erasure did (or would do) to e.
func erasedWords(e privacy.EventReport, dryRun bool) string {
	switch {
	case e.Waiting:
		return "kept until it has finished, then erased"
	case dryRun && len(e.Where) > 0:
		return "would be erased"
	case len(e.Where) > 0:
		return "erased"
	case e.Removed == inbox.RemovedExpired:
		return "already deleted after its retention"
	case e.Removed != "":
		return "already erased"
	}
	return "nothing kept"
}

// listDataRequests prints the data requests the target's providers sent.
func listDataRequests(ctx context.Context, sf *stackFlags, asJSON bool, stdout, stderr io.Writer) error {
	t, err := sf.resolve(ctx, "export", stderr, readsOnly, false)
	if err != nil {
		return err
	}
	reqs, err := t.store().DataRequests(ctx)
	if err != nil {
		return err
	}
	type listed struct {
		At          time.Time      `json:"at"`
		By          string         `json:"by"`
		Reference   string         `json:"reference,omitempty"`
		SubjectHash string         `json:"subject_hash"`
		Held        privacy.Report `json:"held"`
	}
	out := []listed{}
	for _, r := range reqs {
		l := listed{At: r.At, By: r.By, Reference: r.Reference, SubjectHash: r.SubjectHash}
		if err := json.Unmarshal(r.Report, &l.Held); err != nil {
			return fmt.Errorf("data request of %s: %w", r.By, err)
		}
		out = append(out, l)
	}
	if asJSON {
		return printJSON(stdout, out, false)
	}
	if len(out) == 0 {
		fmt.Fprintln(stdout, "No data requests received.")
		return nil
	}
	fmt.Fprintf(stdout, "%s received:\n", plural(len(out), "data request"))
	for _, l := range out {
		fmt.Fprintf(stdout, "%s  %s", l.At.Format("2006-01-02 15:04"), l.By)
		if l.Reference != "" {
			fmt.Fprintf(stdout, " (%s)", l.Reference)
		}
		fmt.Fprintf(stdout, ": hookinbox held data about the person in %s\n", plural(l.Held.Found(), "event"))
		printEvents(stdout, l.Held)
	}
	return nil
}
