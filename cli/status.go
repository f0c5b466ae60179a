package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/console"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
)

// statusReport is what `hookinbox status` prints, as text or JSON.
type statusReport struct {
	Source string    `json:"source"` // "local" or "aws"
	Stack  string    `json:"stack"`
	At     time.Time `json:"at"`

	EventsQueue queueStatus `json:"eventsQueue"`
	DLQ         queueStatus `json:"dlq"`
	// OldestUnfinished is the unfinished event whose last message went out
	// longest ago (the pending index), with its age.
	OldestUnfinished *unfinishedEvent `json:"oldestUnfinished,omitempty"`

	StuckAfter    string `json:"stuckAfter"`
	StuckClaims   int    `json:"stuckClaims"`   // RECEIVED or FAILED, last message older than StuckAfter
	OverdueLeases int    `json:"overdueLeases"` // PROCESSING, lease ended more than StuckAfter ago

	Reconciler []checkpointStatus `json:"reconciler"`

	// Counts are the metrics' sums over Window, by name: what came in and
	// how each event ended.
	Window     string             `json:"window"`
	Counts     map[string]float64 `json:"counts"`
	CountsFrom string             `json:"countsFrom"`

	// Replay lists the commands that replay what the DLQ holds.
	Replay []string `json:"replay,omitempty"`
	// Problems lists what could not be read.
	Problems []string `json:"problems,omitempty"`
}

type queueStatus struct {
	Name     string `json:"name"`
	Visible  int    `json:"visible"`
	InFlight int    `json:"inFlight"`
	Delayed  int    `json:"delayed"`
	// OldestAgeSeconds is CloudWatch's ApproximateAgeOfOldestMessage (AWS
	// only; the local emulators have no CloudWatch).
	OldestAgeSeconds *float64 `json:"oldestAgeSeconds,omitempty"`
}

func (q queueStatus) total() int { return q.Visible + q.InFlight + q.Delayed }

type unfinishedEvent struct {
	Key        string  `json:"key"`
	Status     string  `json:"status"`
	EnqueuedAt string  `json:"enqueuedAt"`
	AgeSeconds float64 `json:"ageSeconds"`
}

type checkpointStatus struct {
	Provider   string  `json:"provider"`
	Checkpoint string  `json:"checkpoint,omitempty"` // every event created before it is handled
	LagSeconds float64 `json:"lagSeconds,omitempty"`
	Blocked    string  `json:"blocked,omitempty"` // the event holding it back
	Tries      int     `json:"tries,omitempty"`
	Missed     float64 `json:"missed"` // events it claimed in the window: they never arrived as webhooks
}

// countNames returns the Count metrics summed over the window: every one
// but the reconciler's per-run gauges, in the order they are printed.
func countNames() []string {
	order := []string{
		metrics.Received, metrics.Duplicate, metrics.VerifyFailed, metrics.IntakeErrors, metrics.Busy, metrics.Enqueued,
		metrics.Processed, metrics.Ignored, metrics.Failed, metrics.Parked, metrics.Replayed, metrics.LeaseTakeovers,
		metrics.Reconciled, metrics.Missed, metrics.Skipped, metrics.ReconcileErrors,
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range order {
		if metrics.Names[n] == metrics.Count {
			out, seen[n] = append(out, n), true
		}
	}
	var rest []string // any other count follows, sorted
	for n, u := range metrics.Names {
		if u == metrics.Count && !seen[n] && n != metrics.StuckClaims && n != metrics.OverdueLeases {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// statusFlags are status's command line.
type statusFlags struct {
	asJSON            bool
	since, stuckAfter time.Duration
	stuckAfterGiven   bool
	stack             *stackFlags
}

// parseStatus parses status's command line.
func parseStatus(args []string, stdout io.Writer) (statusFlags, error) {
	fs := newFlagSet("status", "[--json] [--stack NAME] [--since D]", `
One screen for the operator: the events queue's depth (and on AWS the age
of its oldest message), the DLQ's depth, the oldest unfinished event,
claims stuck longer than --stuck-after and leases long overdue, the
reconciler's checkpoint per provider and the events it found missed, and
the last hour's counts by outcome (received, duplicates, verification
failures, processed, failed, parked, ...). When the DLQ holds events it
prints the commands that replay them. It only reads: any request that
would change the stack is refused before it is sent.
`+stackHelp+`
On a local stack the counts come from the metric lines its functions
write (the state file's metrics_file); on AWS from CloudWatch (namespace
hookinbox/<stack>; it needs cloudwatch:GetMetricData).

With --json only JSON goes to stdout.

Examples:
  hookinbox status
  hookinbox status --json
  hookinbox status --stack shop-prod --since 24h`)
	var f statusFlags
	fs.BoolVar(&f.asJSON, "json", false, "print JSON only")
	fs.DurationVar(&f.since, "since", time.Hour, "the window of the counts")
	fs.DurationVar(&f.stuckAfter, "stuck-after", 15*time.Minute, "a claim unfinished with no message for this long is stuck (the reconciler's STUCK_AFTER)")
	f.stack = addStackFlags(fs)
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return f, err
	}
	if len(rest) > 0 {
		return f, usagef("status takes no arguments, got %q", rest)
	}
	if f.since <= 0 || f.stuckAfter <= 0 {
		return f, usagef("--since and --stuck-after must be positive")
	}
	f.stuckAfterGiven = flagSet(fs, "stuck-after")
	return f, nil
}

func (a *app) cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseStatus(args, stdout)
	if err != nil {
		return err
	}
	t, err := f.stack.resolve(ctx, "status", stderr, readsOnly, true)
	if err != nil {
		return err
	}
	r := collectStatus(ctx, t, a.providers().Names(), f.since, f.stuckAfter, f.stuckAfterGiven)
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.print(stdout)
	return nil
}

// collectStatus reads the report status prints of t: counts over since,
// claims stuck after stuckAfter (on the local stack, its reconciler's
// STUCK_AFTER unless stuckAfterGiven), the reconciler's checkpoints of
// providers.
func collectStatus(ctx context.Context, t *target, providers []string, since, stuckAfter time.Duration, stuckAfterGiven bool) *statusReport {
	r := &statusReport{Source: "aws", Stack: t.stack, At: time.Now().UTC(), Window: since.String(), StuckAfter: stuckAfter.String()}
	var (
		counts    func(ctx context.Context) (map[string]float64, error)
		oldestAge func(ctx context.Context) (*float64, error)
	)
	if st := t.local; st != nil {
		r.Source = "local"
		if d, err := time.ParseDuration(st.functionEnv("ReconcilerFunction", "STUCK_AFTER")); err == nil && !stuckAfterGiven {
			stuckAfter, r.StuckAfter = d, d.String()
		}
		r.CountsFrom = "metrics file " + st.MetricsFile
		counts = func(context.Context) (map[string]float64, error) {
			return fileCounts(st.MetricsFile, r.At.Add(-since))
		}
	} else {
		counts, oldestAge = r.cloudWatch(t, since)
	}
	r.collect(ctx, t, stuckAfter, counts)
	r.checkpoints(ctx, dynamodb.NewFromConfig(t.cfg), t.table, providers)
	if oldestAge != nil {
		if age, err := oldestAge(ctx); err != nil {
			r.problem("age of the oldest message: %v", err)
		} else {
			r.EventsQueue.OldestAgeSeconds = age
		}
	}
	if r.DLQ.total() > 0 {
		r.Replay = []string{
			"hookinbox replay --all --dry-run" + t.args,
			"hookinbox replay --all" + t.args,
		}
	}
	return r
}

// cloudWatch returns how r reads a deployed stack's counts over since,
// and the age of its oldest queued message, from CloudWatch.
func (r *statusReport) cloudWatch(t *target, since time.Duration) (counts func(context.Context) (map[string]float64, error), oldestAge func(context.Context) (*float64, error)) {
	cw := cloudwatch.NewFromConfig(t.cfg)
	ns := "hookinbox/" + t.stack
	r.CountsFrom = "CloudWatch namespace " + ns
	counts = func(ctx context.Context) (map[string]float64, error) {
		return cloudWatchCounts(ctx, cw, ns, r.At.Add(-since), r.At)
	}
	if t.stack == "" {
		// The namespace is the stack's: without it there are no counts.
		r.CountsFrom = "none: pass --stack NAME for the CloudWatch namespace hookinbox/<stack>"
		counts = func(context.Context) (map[string]float64, error) { return map[string]float64{}, nil }
	}
	oldestAge = func(ctx context.Context) (*float64, error) {
		return oldestMessageAge(ctx, cw, queueName(t.queueURL), r.At)
	}
	return counts, oldestAge
}

// queueName returns the name of the queue at url (its last path segment).
func queueName(url string) string {
	return url[strings.LastIndex(url, "/")+1:]
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// problem records something status could not read; the rest still prints.
func (r *statusReport) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// collect fills the report from t's queues and inbox, and the counts.
func (r *statusReport) collect(ctx context.Context, t *target, stuckAfter time.Duration, counts func(context.Context) (map[string]float64, error)) {
	sq := sqs.NewFromConfig(t.cfg)
	var err error
	if r.EventsQueue, err = queueDepth(ctx, sq, t.queueURL); err != nil {
		r.problem("events queue: %v", err)
	}
	if r.DLQ, err = queueDepth(ctx, sq, t.dlqURL); err != nil {
		r.problem("DLQ: %v", err)
	}

	// The pending index holds only unfinished events: no scan.
	items, err := inbox.NewDynamoDB(dynamodb.NewFromConfig(t.cfg), t.table).Pending(ctx, r.At, 1000)
	if err != nil {
		r.problem("inbox %s: %v", t.table, err)
	}
	cutoff := r.At.Add(-stuckAfter)
	for _, it := range items {
		switch {
		case (it.Status == inbox.Received || it.Status == inbox.Failed) && it.EnqueuedAt.Before(cutoff):
			r.StuckClaims++
		case it.Status == inbox.Processing && it.LeaseUntil.Before(cutoff):
			r.OverdueLeases++
		}
		if o := r.OldestUnfinished; o == nil || it.EnqueuedAt.Format(time.RFC3339Nano) < o.EnqueuedAt {
			r.OldestUnfinished = &unfinishedEvent{
				Key: it.Key.String(), Status: string(it.Status),
				EnqueuedAt: it.EnqueuedAt.UTC().Format(time.RFC3339Nano), AgeSeconds: r.At.Sub(it.EnqueuedAt).Seconds(),
			}
		}
	}

	r.Counts = map[string]float64{}
	if got, err := counts(ctx); err != nil {
		r.problem("counts: %v", err)
	} else {
		r.Counts = got
	}
}

// checkpoints adds the reconciler's checkpoint of each of providers that
// has one: every provider whose events the reconciler has listed.
func (r *statusReport) checkpoints(ctx context.Context, db *dynamodb.Client, table string, providers []string) {
	cps := reconcile.NewCheckpoints(db, table)
	for _, p := range providers {
		c := checkpointStatus{Provider: p, Missed: r.Counts[metrics.Missed]}
		cp, ok, err := cps.Load(ctx, p)
		switch {
		case err != nil:
			r.problem("reconciler checkpoint of %s: %v", p, err)
			continue
		case !ok:
			continue
		}
		c.Checkpoint = cp.At.UTC().Format(time.RFC3339)
		c.LagSeconds = r.At.Sub(cp.At).Seconds()
		c.Blocked, c.Tries = cp.Blocked.String(), cp.Tries
		r.Reconciler = append(r.Reconciler, c)
	}
}

// queueDepth reads a queue's approximate message counts.
func queueDepth(ctx context.Context, sq *sqs.Client, url string) (queueStatus, error) {
	d, err := queue.New(sq, url).Depth(ctx)
	return queueStatus{Name: queueName(url), Visible: d.Visible, InFlight: d.InFlight, Delayed: d.Delayed}, err
}

// fileCounts sums the local stack's metric lines since the given time.
func fileCounts(path string, since time.Time) (map[string]float64, error) {
	lines, err := metricLines(path)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, n := range countNames() {
		out[n] = emf.Sum(lines, n, nil, since)
	}
	return out, nil
}

// metricLines reads the local stack's metric lines (none before the
// first is written).
func metricLines(path string) ([]emf.Line, error) {
	if path == "" {
		return nil, errors.New("the state file names no metrics file; restart hookinbox dev")
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing recorded yet
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines, err := emf.ReadLines(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return lines, nil
}

// metricData is the CloudWatch call status makes.
type metricData interface {
	GetMetricData(context.Context, *cloudwatch.GetMetricDataInput, ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
}

// cloudWatchCounts sums each count metric (without dimensions) in the
// namespace over [from, to).
func cloudWatchCounts(ctx context.Context, cw metricData, namespace string, from, to time.Time) (map[string]float64, error) {
	names := countNames()
	qs := make([]console.MetricQuery, len(names))
	for i, n := range names {
		qs[i] = console.MetricQuery{Name: n, Stat: "Sum"}
	}
	sums, err := cloudWatchMetrics(ctx, cw, namespace, console.Span{From: from, Step: max(to.Sub(from).Round(time.Minute), time.Minute), Buckets: 1}, qs)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for i, n := range names {
		out[n] = sums[i][0]
	}
	return out, nil
}

// oldestMessageAge returns the latest ApproximateAgeOfOldestMessage of
// the queue, or nil when CloudWatch has none in the last 15 minutes.
func oldestMessageAge(ctx context.Context, cw metricData, queueName string, now time.Time) (*float64, error) {
	out, err := cw.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(now.Add(-15 * time.Minute)), EndTime: aws.Time(now),
		ScanBy: cwtypes.ScanByTimestampDescending,
		MetricDataQueries: []cwtypes.MetricDataQuery{{
			Id: aws.String("age"),
			MetricStat: &cwtypes.MetricStat{
				Metric: &cwtypes.Metric{Namespace: aws.String("AWS/SQS"), MetricName: aws.String("ApproximateAgeOfOldestMessage"),
					Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(queueName)}}},
				Period: aws.Int32(60), Stat: aws.String("Maximum"),
			},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("CloudWatch GetMetricData: %w", err)
	}
	for _, res := range out.MetricDataResults {
		if len(res.Values) > 0 {
			return &res.Values[0], nil
		}
	}
	return nil, nil
}

// print writes the report for a terminal.
func (r *statusReport) print(w io.Writer) {
	where := "AWS stack " + r.Stack
	if r.Stack == "" {
		where = "AWS resources"
	}
	if r.Source == "local" {
		where = "local stack " + r.Stack
	}
	fmt.Fprintf(w, "hookinbox status: %s at %s\n\n", where, r.At.Format(time.RFC3339))
	fmt.Fprintf(w, "Queues\n")
	fmt.Fprintf(w, "  events  %-30s %d waiting, %d in flight, %d delayed", r.EventsQueue.Name, r.EventsQueue.Visible, r.EventsQueue.InFlight, r.EventsQueue.Delayed)
	if a := r.EventsQueue.OldestAgeSeconds; a != nil {
		fmt.Fprintf(w, "; oldest message %s old", ago(*a))
	}
	fmt.Fprintf(w, "\n  DLQ     %-30s %d parked\n", r.DLQ.Name, r.DLQ.total())
	fmt.Fprintf(w, "\nClaims\n")
	if o := r.OldestUnfinished; o != nil {
		fmt.Fprintf(w, "  oldest unfinished   %s (%s), last message %s ago\n", o.Key, o.Status, ago(o.AgeSeconds))
	} else {
		fmt.Fprintf(w, "  oldest unfinished   none: every event is finished\n")
	}
	fmt.Fprintf(w, "  stuck claims        %d (RECEIVED or FAILED with no message for %s)\n", r.StuckClaims, r.StuckAfter)
	fmt.Fprintf(w, "  overdue leases      %d (PROCESSING, lease ended over %s ago)\n", r.OverdueLeases, r.StuckAfter)
	for _, c := range r.Reconciler {
		fmt.Fprintf(w, "\nReconciler (%s)\n", c.Provider)
		if c.Checkpoint == "" {
			fmt.Fprintf(w, "  checkpoint          none yet (the reconciler has not run)\n")
		} else {
			fmt.Fprintf(w, "  checkpoint          %s (%s behind)\n", c.Checkpoint, ago(c.LagSeconds))
		}
		if c.Blocked != "" {
			fmt.Fprintf(w, "  held back by        %s (%d tries)\n", c.Blocked, c.Tries)
		}
		fmt.Fprintf(w, "  missed              %g in the last %s (claimed by the reconciler: never arrived as webhooks)\n", c.Missed, r.Window)
	}
	fmt.Fprintf(w, "\nLast %s (%s)\n", r.Window, r.CountsFrom)
	for _, n := range countNames() {
		if v, ok := r.Counts[n]; ok {
			fmt.Fprintf(w, "  %-16s %g\n", n, v)
		}
	}
	if len(r.Replay) > 0 {
		fmt.Fprintf(w, "\nThe DLQ holds %s. See what a replay would do, then replay them:\n", plural(r.DLQ.total(), "event"))
		for _, c := range r.Replay {
			fmt.Fprintf(w, "  %s\n", c)
		}
		fmt.Fprintf(w, "(docs/operations.md, \"The DLQ alarm fired\", says how to read the reasons first)\n")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "\ncould not read: %s\n", p)
	}
}

// plural returns "1 event", "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ago formats seconds for a person.
func ago(seconds float64) string {
	return time.Duration(seconds * float64(time.Second)).Round(time.Second).String()
}
