package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/privacy"
)

// exportHelp is what export --help says above the flags.
const exportHelp = `
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
` + stackHelp

// exportFlags are export's command line.
type exportFlags struct {
	requests bool
	subject  *subjectFlags
	stack    *stackFlags
}

// parseExport parses export's command line.
func parseExport(args []string, stdout io.Writer) (exportFlags, error) {
	var f exportFlags
	fs := newFlagSet("export", "--subject <provider>:<customer id> | --email <address> | --requests [--json] [--stack NAME]", exportHelp)
	f.stack = addStackFlags(fs)
	f.subject = addSubjectFlags(fs)
	fs.BoolVar(&f.requests, "requests", false, "list the data requests providers sent, with what hookinbox held about each person")
	_, err := parseFlags(fs, args, stdout)
	return f, err
}

func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseExport(args, stdout)
	if err != nil {
		return err
	}
	if f.requests {
		return listDataRequests(ctx, f.stack, f.subject.asJSON, stdout, stderr)
	}
	subjects, err := f.subject.parse()
	if err != nil {
		return err
	}
	e, err := f.subject.eraser(ctx, f.stack, "export", stderr, readsOnly, false)
	if err != nil {
		return err
	}
	rep, err := e.Export(ctx, subjects)
	if err != nil {
		return err
	}
	if f.subject.asJSON {
		return printJSON(stdout, rep, rep.Found() == 0)
	}
	return printHeld(stdout, rep)
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
