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

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/stripe/eventbridge"
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
	e := privacy.NewEraser(t.store(), privacy.NewHasher(keys), nil)
	if !queues {
		return e, nil
	}
	url, err := f.bridgeDLQ(ctx, t)
	if err != nil || url == "" {
		return e, err
	}
	fmt.Fprintf(stderr, "hookinbox %s: also the Stripe EventBridge DLQ %s\n", command, url)
	p := eventbridge.Provider() // whose events the bridge's DLQ holds
	return e.WithQueue(privacy.EventQueue{Client: sqs.NewFromConfig(t.cfg), URL: url, Provider: p.Name(), Finder: p}), nil
}

// bridgeDLQ returns the URL of the target's Stripe EventBridge DLQ: the
// flag's, the local stack's, or the stack's output; "" when it has none.
func (f *subjectFlags) bridgeDLQ(ctx context.Context, t *target) (string, error) {
	switch {
	case f.bridgeDLQURL != "":
		return f.bridgeDLQURL, nil
	case t.local != nil:
		return t.local.Queues[eventbridge.DLQ].URL, nil
	case t.stack == "":
		return "", nil
	}
	out, err := stackOutputs(ctx, cloudformation.NewFromConfig(t.cfg), t.stack)
	if err != nil {
		return "", err
	}
	return out[eventbridge.DLQOutput], nil
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
	fs := newFlagSet("erase", "--subject <provider>:<customer id> | --email <address> [--dry-run] [--stack NAME]", `
Erases what hookinbox keeps about a person: the payload of every event
indexed under the subject (inline, payload item, S3 object) and the
results of its finished effects. Each event's dedupe record stays (key,
status, body hash), so a provider's retry is still a duplicate and runs
nothing; a parked event erased cannot be replayed. It writes an audit
record with the subject's keyed hash, never the subject. With
StripeEventBridgeSource it also deletes the Stripe events naming the
subject from the Stripe EventBridge DLQ, and leaves the others there.
--dry-run lists what would go. Your business's own records are yours to
erase (docs/security.md, "Personal data").
`+stackHelp)
	sf := addStackFlags(fs)
	f := addSubjectFlags(fs)
	dryRun := fs.Bool("dry-run", false, "list what would be erased; change nothing")
	by := fs.String("by", "", "who asked, for the audit record (default cli:$USER)")
	fs.StringVar(&f.bridgeDLQURL, "stripe-bridge-dlq-url", "", "the Stripe EventBridge DLQ `URL` (default: the stack's "+eventbridge.DLQOutput+" output, when it has one)")
	if _, err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	subjects, err := f.parse()
	if err != nil {
		return err
	}
	var allowed func(string) bool
	if *dryRun {
		allowed = countsOnly
	}
	e, err := f.eraser(ctx, sf, "erase", stderr, allowed, true)
	if err != nil {
		return err
	}
	who := *by
	if who == "" {
		who = "cli:" + orDefault(os.Getenv("USER"), "unknown")
	}
	rep, err := e.Erase(ctx, privacy.Request{Subjects: subjects, By: who, DryRun: *dryRun})
	if err != nil {
		return err
	}
	verb := "erased"
	if *dryRun {
		verb = "would erase"
	}
	return printReport(stdout, f.asJSON, rep, verb)
}

func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "--subject <provider>:<customer id> | --email <address> [--json] [--stack NAME]", `
Lists what hookinbox holds about a person, for a data request: every
event indexed under the subject, its provider, type, status, dates, and
where its personal data is stored (inline, payload item, S3 object,
effect results), or that it was erased or expired. It only reads.
`+stackHelp)
	sf := addStackFlags(fs)
	f := addSubjectFlags(fs)
	if _, err := parseFlags(fs, args, stdout); err != nil {
		return err
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
	return printReport(stdout, f.asJSON, rep, "holds")
}

// countsOnly accepts what erase --dry-run sends: reads, and receiving the
// Stripe EventBridge DLQ's messages and making them visible again.
func countsOnly(operation string) bool {
	return readsOnly(operation) || operation == "ReceiveMessage" || operation == "ChangeMessageVisibility"
}

// printReport prints r as JSON or as lines for a person.
func printReport(w io.Writer, asJSON bool, r privacy.Report, verb string) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintf(w, "subject hash %s: %s %d copies in %d events\n", r.SubjectHash, verb, r.Copies, len(r.Events))
	if r.Queued > 0 {
		fmt.Fprintf(w, "  and %d Stripe events in the Stripe EventBridge DLQ\n", r.Queued)
	}
	for _, e := range r.Events {
		where := strings.Join(e.Where, ", ")
		if e.Removed != "" {
			where = joinNonEmpty(where, "payload "+e.Removed)
		}
		fmt.Fprintf(w, "  %s  %s %s  %s  received %s  expires %s  %s\n", e.Key, e.Provider, e.Type, e.Status,
			e.ReceivedAt.Format("2006-01-02T15:04:05Z07:00"), e.ExpiresAt.Format("2006-01-02"), where)
	}
	return nil
}

// joinNonEmpty joins the non-empty of a and b with ", ".
func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}
