package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"

	"github.com/hookinbox/hookinbox/internal/eventbridge"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
)

// eraseHelp is what erase --help says above the flags.
const eraseHelp = `
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
` + stackHelp

// eraseFlags are erase's command line.
type eraseFlags struct {
	subjects []provider.Subject
	by       string // who asked (requester)
	dryRun   bool
	subject  *subjectFlags
	stack    *stackFlags
}

// parseErase parses erase's command line.
func parseErase(args []string, stdout io.Writer) (eraseFlags, error) {
	var f eraseFlags
	fs := newFlagSet("erase", "--subject <provider>:<customer id> | --email <address> [--dry-run] [--by WHO] [--stack NAME]", eraseHelp)
	f.stack = addStackFlags(fs)
	f.subject = addSubjectFlags(fs)
	fs.BoolVar(&f.dryRun, "dry-run", false, "list what would be erased; change nothing")
	by := fs.String("by", "", "who asked, for the audit record (default cli:<your user name>)")
	fs.StringVar(&f.subject.bridgeDLQURL, "stripe-bridge-dlq-url", "", "the Stripe EventBridge DLQ `URL` (default: the stack's "+eventbridge.DLQOutput+" output, when it has one)")
	if _, err := parseFlags(fs, args, stdout); err != nil {
		return f, err
	}
	var err error
	if f.subjects, err = f.subject.parse(); err != nil {
		return f, err
	}
	f.by, err = requester(*by)
	return f, err
}

func cmdErase(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseErase(args, stdout)
	if err != nil {
		return err
	}
	var allowed func(string) bool
	if f.dryRun {
		allowed = readsAndPeeks
	}
	e, err := f.subject.eraser(ctx, f.stack, "erase", stderr, allowed, true)
	if err != nil {
		return err
	}
	rep, err := e.Erase(ctx, privacy.Request{Subjects: f.subjects, By: f.by, DryRun: f.dryRun})
	if err != nil {
		return err
	}
	if f.subject.asJSON {
		return printJSON(stdout, rep, rep.Found()+rep.Queued == 0)
	}
	return printErasure(stdout, rep, f.dryRun)
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
