package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/reconcile"
)

// reconcilePath is the route of the running `hookinbox dev` that runs the
// ReconcilerFunction once, as its schedule does, and answers its summary.
const reconcilePath = "/_dev/reconcile"

func cmdReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: hookinbox reconcile [--json] [--state-file FILE]

Runs the local stack's ReconcilerFunction once, now, as its schedule does:
stuck claims are re-enqueued, and every provider's configured source (the
events its API lists, or the objects it fetches again until final) is read
from its API stand-in since its checkpoint. Prints what each source did
and every claim it made. A source whose settings the local stack lacks is
off unless hookinbox dev was started with them, e.g.
  hookinbox dev --env GITHUB_RECONCILE_HOOKS=repos/acme/shop/hooks/1 --env SHOPIFY_SHOP_DOMAIN=dev.myshopify.com

Flags:
`)
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print the run's summary as JSON")
	stateFile := fs.String("state-file", defaultStateFile(), "state file of the running local stack")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &usageError{msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("reconcile takes no arguments, got %q", fs.Args())
	}
	st, err := loadState(*stateFile)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.BaseURL+reconcilePath, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reach hookinbox dev at %s: %w", st.BaseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the reconciler failed: %s", strings.TrimSpace(string(body)))
	}
	if *asJSON {
		_, err := stdout.Write(append(body, '\n'))
		return err
	}
	var sum reconcile.Summary
	if err := json.Unmarshal(body, &sum); err != nil {
		return fmt.Errorf("the reconciler's answer: %w", err)
	}
	printReconcile(stdout, sum)
	return nil
}

// printReconcile writes a run's summary for a person.
func printReconcile(w io.Writer, s reconcile.Summary) {
	fmt.Fprintf(w, "stuck claims  %d, re-enqueued %d (overdue leases %d)\n", s.Stuck, s.Reenqueued, s.OverdueLeases)
	for _, pr := range s.Providers {
		cp := "-"
		if !pr.Checkpoint.IsZero() {
			cp = pr.Checkpoint.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%-8s      listed %d, missed %d, skipped %d, errors %d, checkpoint %s\n",
			pr.Provider, pr.Listed, pr.Missed, pr.Skipped, pr.Errors, cp)
	}
	for _, l := range s.Events {
		fmt.Fprintf(w, "  %-12s %s %s  %s\n", l.Outcome, l.Key, l.Type, l.Note)
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
}
