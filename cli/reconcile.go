package cli

import (
	"context"
	"encoding/json"
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

// reconcileFlags are reconcile's command line.
type reconcileFlags struct {
	asJSON    bool
	stateFile string
}

// parseReconcile parses reconcile's command line.
func parseReconcile(args []string, stdout io.Writer) (reconcileFlags, error) {
	var f reconcileFlags
	fs := newFlagSet("reconcile", "[--json] [--state-file FILE]", `
Runs the local stack's ReconcilerFunction once, now, as its schedule does:
stuck claims are re-enqueued, and every provider's configured source (the
events its API lists, or the objects it fetches again until final) is read
from its API stand-in since its checkpoint. Prints what each source did
and every claim it made. A source whose settings the local stack lacks is
off unless hookinbox dev was started with them, e.g.
  hookinbox dev --env GITHUB_RECONCILE_HOOKS=repos/acme/shop/hooks/1 --env SHOPIFY_SHOP_DOMAIN=dev.myshopify.com`)
	fs.BoolVar(&f.asJSON, "json", false, "print the run's summary as JSON")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "state file of the running local stack")
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return f, err
	}
	if len(rest) > 0 {
		return f, usagef("reconcile takes no arguments, got %q", rest)
	}
	return f, nil
}

func cmdReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseReconcile(args, stdout)
	if err != nil {
		return err
	}
	st, err := loadState(f.stateFile)
	if err != nil {
		return err
	}
	body, err := reconcileOnce(ctx, st.BaseURL)
	if err != nil {
		return err
	}
	if f.asJSON {
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

// reconcileOnce asks the running hookinbox dev at baseURL to run its
// reconciler once and returns the run's summary, as JSON.
func reconcileOnce(ctx context.Context, baseURL string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+reconcilePath, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach hookinbox dev at %s: %w", baseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the reconciler failed: %s", strings.TrimSpace(string(body)))
	}
	return body, nil
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
