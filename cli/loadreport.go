package cli

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
)

// loadRatios are one run's ratios of the first target's medians over the
// second's.
type loadRatios struct{ throughput, p99, cpu float64 }

func ratiosOf(r, fl *loadTarget) loadRatios {
	lr := loadRatios{throughput: ratioOf(r, fl, roundResult.throughput), p99: ratioOf(r, fl, roundResult.p99ms)}
	if r.cpu != nil && fl.cpu != nil {
		lr.cpu = ratioOf(r, fl, roundResult.cpuPerDelivery)
	}
	return lr
}

// ratioOf is r's median of v over fl's.
func ratioOf(r, fl *loadTarget, v func(roundResult) float64) float64 {
	return r.median(v) / fl.median(v)
}

// printRunsSummary prints, over several runs, the median and the range of
// each run's ratios: each run starts its own emulators and bootstraps and
// carries an offset of its own, which only more runs average out.
func printRunsSummary(w io.Writer, first, second string, runs []loadRatios) {
	line := func(v func(loadRatios) float64) string {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = v(r)
		}
		m := median(xs) // sorts xs
		return fmt.Sprintf("median %.2f× (%.2f-%.2f×)", m, xs[0], xs[len(xs)-1])
	}
	fmt.Fprintf(w, "%s / %s over %d runs (each run's ratio of medians): throughput %s, p99 %s",
		first, second, len(runs), line(func(r loadRatios) float64 { return r.throughput }), line(func(r loadRatios) float64 { return r.p99 }))
	if runs[0].cpu > 0 {
		fmt.Fprintf(w, ", CPU per delivery %s", line(func(r loadRatios) float64 { return r.cpu }))
	}
	fmt.Fprintln(w)
}

// printLoadSummary prints each target's medians over its rounds and, for
// two targets, the first's over the second's.
func printLoadSummary(w io.Writer, targets []*loadTarget) {
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-8s %12s %9s %9s %9s %12s %12s %12s %13s %8s\n", "target", "deliveries/s", "p50 ms", "p95 ms", "p99 ms", "CPU µs/dlv", "RIE µs/dlv", "emu µs/dlv", "machine µs/dlv", "errors")
	for _, tg := range targets {
		cpu, rie, emu, machine := "-", "-", "-", "-"
		if tg.cpu != nil {
			cpu = fmt.Sprintf("%.0f", tg.median(roundResult.cpuPerDelivery))
			rie = fmt.Sprintf("%.0f", tg.median(roundResult.riePerDelivery))
			emu = fmt.Sprintf("%.0f", tg.median(roundResult.emulatorsPerDelivery))
			machine = fmt.Sprintf("%.0f", tg.median(roundResult.machinePerDelivery))
		}
		fmt.Fprintf(w, "%-8s %12.1f %9.2f %9.2f %9.2f %12s %12s %12s %14s %8d\n", tg.name, tg.median(roundResult.throughput),
			tg.median(roundResult.p50ms), tg.median(roundResult.p95ms), tg.median(roundResult.p99ms), cpu, rie, emu, machine, tg.errors())
	}
	if len(targets) != 2 {
		return
	}
	r, fl := targets[0], targets[1]
	ratio := func(v func(roundResult) float64) float64 { return ratioOf(r, fl, v) }
	fmt.Fprintf(w, "\n%s / %s (medians of %d rounds): throughput %.2f×, p50 %.2f×, p95 %.2f×, p99 %.2f×",
		r.name, fl.name, len(r.rounds), ratio(roundResult.throughput), ratio(roundResult.p50ms), ratio(roundResult.p95ms), ratio(roundResult.p99ms))
	if r.cpu != nil && fl.cpu != nil {
		fmt.Fprintf(w, ", CPU per delivery %.2f× (the machine's %.2f×)", ratio(roundResult.cpuPerDelivery), ratio(roundResult.machinePerDelivery))
	}
	fmt.Fprintln(w)
}

// writeBenchstat writes every round of every target to path in the Go
// benchmark format, one line per round, so that `benchstat -col /target
// path` compares the targets and `benchstat old new` two runs.
func writeBenchstat(path string, f loadFlags, targets []*loadTarget) error {
	var b strings.Builder
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: github.com/hookinbox/hookinbox/cmd/hookinbox\n", runtime.GOOS, runtime.GOARCH)
	if model := cpuModel(); model != "" {
		fmt.Fprintf(&b, "cpu: %s\n", model)
	}
	mode := fmt.Sprintf("concurrency=%d", f.concurrency)
	if f.rate > 0 {
		mode = fmt.Sprintf("rate=%g", f.rate)
	}
	for _, tg := range targets {
		for _, r := range tg.rounds {
			fmt.Fprintf(&b, "BenchmarkLoad/%s/target=%s %d %.0f ns/op %.1f deliveries/s %.3f p50-ms %.3f p95-ms %.3f p99-ms",
				mode, tg.name, r.sent, float64(r.elapsed)/float64(max(r.sent, 1)), r.throughput(), r.p50ms(), r.p95ms(), r.p99ms())
			if r.cpu != nil {
				fmt.Fprintf(&b, " %.1f cpu-us/delivery %.1f rie-cpu-us/delivery %.1f emulators-cpu-us/delivery %.1f machine-cpu-us/delivery",
					r.cpuPerDelivery(), r.riePerDelivery(), r.emulatorsPerDelivery(), r.machinePerDelivery())
			}
			b.WriteString("\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("--benchstat: %w", err)
	}
	return nil
}

// cpuModel returns the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadTarget is a URL driven round after round.
type loadTarget struct {
	name, url string
	// cpu, when set, returns the CPU time the target's processes have
	// used so far.
	cpu    func() (cpuTimes, error)
	rounds []roundResult
}

// median returns the median over the target's rounds of v.
func (t *loadTarget) median(v func(roundResult) float64) float64 {
	xs := make([]float64, len(t.rounds))
	for i, r := range t.rounds {
		xs[i] = v(r)
	}
	return median(xs)
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func (t *loadTarget) errors() int {
	n := 0
	for _, r := range t.rounds {
		n += r.errors
	}
	return n
}
