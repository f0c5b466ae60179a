package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/chaos"
)

// printVerdict prints the figures of both runs, every difference, and the
// verdict.
func printVerdict(w io.Writer, f chaosFlags, refStats chaos.Stats, ref chaos.Snapshot, st chaos.Stats, got chaos.Snapshot, diffs []string, remote bool, notes ...string) {
	fault := ""
	if f.fault != "" {
		fault = " --fault " + f.fault
	}
	fmt.Fprintf(w, "chaos: --dup %d --concurrency %d --shuffle=%v --delay-jitter %s --queue-dups=%v --seed %d%s\n",
		f.dup, f.concurrency, f.shuffle, f.jitter, f.queueDups, f.seed, fault)
	fmt.Fprintf(w, "%-10s %7s %10s %8s %8s %7s %12s %8s %8s  %s\n", "run", "events", "deliveries", "retried", "refused", "lost", "queue-copies", "effects", "quiet", "statuses")
	printRunRow(w, "reference", refStats, ref)
	printRunRow(w, "chaos", st, got)
	switch {
	case got.Performed == nil:
		fmt.Fprintln(w, "duplicated effects: not visible on a remote stack (the ledger holds one record per effect)")
	default:
		fmt.Fprintf(w, "duplicated effects: %d\n", len(got.Duplicated()))
	}
	if remote {
		fmt.Fprintln(w, "business records compared: those about the corpus's events, customers and subscriptions")
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if len(diffs) == 0 {
		fmt.Fprintf(w, "verdict: SAME: %d events delivered %d times each end as one in-order delivery left them\n", len(ref.Status), f.dup)
		return
	}
	fmt.Fprintf(w, "verdict: DIFFERENT: %d differences\n", len(diffs))
	for _, d := range diffs {
		fmt.Fprintln(w, "  "+d)
	}
}

// printRunRow prints the figures of the run name: what its deliveries
// did and what its snapshot holds.
func printRunRow(w io.Writer, name string, s chaos.Stats, snap chaos.Snapshot) {
	fmt.Fprintf(w, "%-10s %7d %10d %8d %8s %7d %12d %8d %8s  %s\n", name, s.Events, s.Deliveries, s.Retried, refusedWords(s), s.Undelivered,
		s.QueueCopies, snap.Effects(), s.ToQuiet.Round(100*time.Millisecond), statusCounts(snap))
}

// statusCounts counts the snapshot's events by status: "DONE 3, IGNORED 1".
func statusCounts(s chaos.Snapshot) string {
	n := map[string]int{}
	for _, v := range s.Status {
		n[string(v)]++
	}
	var parts []string
	for k, v := range n {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// refusedWords counts the final 4xx answers by status: "2×401".
func refusedWords(s chaos.Stats) string {
	if len(s.Refused) == 0 {
		return "0"
	}
	var parts []string
	for code, n := range s.Refused {
		parts = append(parts, fmt.Sprintf("%d×%d", n, code))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
