package cli

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestRequireLoopback(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:3000/webhooks/stripe", true},
		{"http://localhost:3000/webhooks/stripe", true},
		{"http://[::1]:3000/webhooks/stripe", true},
		{"http://127.0.0.2:3000/", true},
		{"https://hooks.example.com/webhooks/stripe", false},
		{"http://10.0.0.1:3000/", false},
		{"not a url", false},
	} {
		if err := requireLoopback(tc.url); (err == nil) != tc.ok {
			t.Errorf("requireLoopback(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

func TestPercentile(t *testing.T) {
	var xs []time.Duration
	for i := 1; i <= 100; i++ {
		xs = append(xs, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {95, 95 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}} {
		if got := percentile(xs, tc.p); got != tc.want {
			t.Errorf("percentile(1..100 ms, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("percentile of one = %v, want 7", got)
	}
}

// testDeliveries returns n deliveries of the provider name's events, a
// share dup repeating an earlier one, signed with its local secrets.
func testDeliveries(t *testing.T, name string, n int, dup float64, size int) []webhook.Request {
	t.Helper()
	src, err := testLoadSource(name, size)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := src.deliveries(n, dup)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func testLoadSource(name string, size int) (*loadSource, error) {
	root, err := devstack.RepoRoot("")
	if err != nil {
		return nil, err
	}
	p, _ := providers().Lookup(name)
	return newLoadSource(root, senders()[name], size, envconfig.Split(pipeline.LocalEnv("")[p.Webhook().SecretEnv]))
}

func TestMakeDeliveriesRepeatsTheDuplicateShare(t *testing.T) {
	ds := testDeliveries(t, providers().Names()[0], 200, 0.25, 0)
	seen := map[string]bool{}
	dups := 0
	for _, d := range ds {
		if seen[string(d.Body)] {
			dups++
		}
		seen[string(d.Body)] = true
		if d.Header["stripe-signature"] == "" {
			t.Fatal("a delivery is not signed")
		}
	}
	if len(ds) != 200 || dups != 50 {
		t.Errorf("%d deliveries, %d repeats; want 200 and 50", len(ds), dups)
	}
}

// TestLoadSendsEveryProvidersFreshEvents: --provider sends that provider's
// sample event, a fresh event id each delivery (a new round's too), signed
// so that its verifier accepts it.
func TestLoadSendsEveryProvidersFreshEvents(t *testing.T) {
	for _, p := range providers().All() {
		t.Run(p.Name(), func(t *testing.T) {
			src, err := testLoadSource(p.Name(), 0)
			if err != nil {
				t.Fatal(err)
			}
			secrets := envconfig.Split(pipeline.LocalEnv("")[p.Webhook().SecretEnv])
			if p.Webhook().Unsigned {
				secrets = nil
			}
			v, err := p.Verifier(secrets, &provider.Env{})
			if err != nil {
				t.Fatal(err)
			}
			keys := map[webhook.Key]bool{}
			for round := 0; round < 2; round++ {
				ds, err := src.deliveries(3, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range ds {
					evs, err := v.Verify(context.Background(), d)
					if err != nil || len(evs) != 1 || d.Method != p.Webhook().HTTPMethod() {
						t.Fatalf("%s %s: %v, %v; want one event its verifier accepts", d.Method, d.Body, evs, err)
					}
					keys[evs[0].Key()] = true
				}
			}
			if len(keys) != 6 {
				t.Errorf("keys %v, want 6 distinct", keys)
			}
		})
	}
	var ue *usageError
	if err := cmdLoad(context.Background(), []string{"--provider", "nosuch"}, io.Discard, io.Discard); !errors.As(err, &ue) {
		t.Errorf("load --provider nosuch: %v, want a usage error", err)
	}
}

func TestRunRoundCountsEveryDelivery(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Stripe-Signature") == "" {
			http.Error(w, "unsigned", http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen[string(body)]++
		mu.Unlock()
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		f    loadFlags
	}{
		{"fixed concurrency", loadFlags{concurrency: 3, count: 40}},
		{"fixed rate", loadFlags{concurrency: 3, count: 40, rate: 2000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(seen)
			res, err := runRound(context.Background(), srv.Client(), srv.URL, testDeliveries(t, providers().Names()[0], 40, 0.25, 0), tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if res.sent != 40 || res.errors != 0 {
				t.Errorf("sent %d, %d errors; want 40, 0", res.sent, res.errors)
			}
			if len(seen) != 30 {
				t.Errorf("%d distinct bodies arrived, want 30 (40 with 25%% repeats)", len(seen))
			}
			if !(res.p50 <= res.p95 && res.p95 <= res.p99) {
				t.Errorf("percentiles out of order: %v %v %v", res.p50, res.p95, res.p99)
			}
		})
	}
}

func TestLoadSummaryAndBenchstat(t *testing.T) {
	round := func(sent int, elapsed, p time.Duration, cpu time.Duration) roundResult {
		return roundResult{sent: sent, elapsed: elapsed, p50: p, p95: 2 * p, p99: 3 * p, cpu: &cpuTimes{function: cpu, rie: cpu / 2, emulators: cpu / 4, load: cpu / 8, machine: 4 * cpu}}
	}
	targets := []*loadTarget{
		{name: "receiver", cpu: func() (cpuTimes, error) { return cpuTimes{}, nil }, rounds: []roundResult{
			round(100, time.Second, 10*time.Millisecond, 200*time.Millisecond),
			round(100, 2*time.Second, 20*time.Millisecond, 300*time.Millisecond),
			round(100, 4*time.Second, 40*time.Millisecond, 100*time.Millisecond),
		}},
		{name: "floor", cpu: func() (cpuTimes, error) { return cpuTimes{}, nil }, rounds: []roundResult{
			round(100, time.Second, 10*time.Millisecond, 100*time.Millisecond),
			round(100, time.Second, 10*time.Millisecond, 100*time.Millisecond),
			round(100, time.Second, 10*time.Millisecond, 100*time.Millisecond),
		}},
	}
	var out strings.Builder
	printLoadSummary(&out, targets)
	for _, want := range []string{
		"receiver / floor (medians of 3 rounds): throughput 0.50×, p50 2.00×, p95 2.00×, p99 2.00×, CPU per delivery 2.00× (the machine's 2.00×)",
		// The receiver's medians: 2000 µs a delivery in its bootstraps, 8000 on the machine.
		"2000         1000          500           8000",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary does not say %q:\n%s", want, out.String())
		}
	}
	if got, want := round(100, time.Second, time.Millisecond, 100*time.Millisecond).String(), "CPU 1000 µs/delivery (RIE 500, emulators 250, load 125; machine 4000)"; !strings.Contains(got, want) {
		t.Errorf("round says %q, want it to contain %q", got, want)
	}

	path := filepath.Join(t.TempDir(), "load.txt")
	if err := writeBenchstat(path, loadFlags{concurrency: 4}, targets); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var benches []string
	for _, l := range lines {
		if strings.HasPrefix(l, "Benchmark") {
			benches = append(benches, l)
		}
	}
	if len(benches) != 6 {
		t.Fatalf("%d benchmark lines, want 6:\n%s", len(benches), b)
	}
	wantLine := "BenchmarkLoad/concurrency=4/target=receiver 100 10000000 ns/op 100.0 deliveries/s 10.000 p50-ms 20.000 p95-ms 30.000 p99-ms 2000.0 cpu-us/delivery 1000.0 rie-cpu-us/delivery 500.0 emulators-cpu-us/delivery 8000.0 machine-cpu-us/delivery"
	if benches[0] != wantLine {
		t.Errorf("first line\n got %s\nwant %s", benches[0], wantLine)
	}
}

// TestLoadRunsBothBootstraps runs `hookinbox load` as make bench does, at a
// tiny size: it builds both bootstraps, starts its own emulators and
// copies under aws-lambda-rie, and prints every figure. Only the shape of
// the output is checked, never a timing.
func TestLoadRunsBothBootstraps(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds the bootstraps and runs them under aws-lambda-rie on the emulators; run without -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bench := filepath.Join(t.TempDir(), "load.txt")
	var out, errOut strings.Builder
	err := cmdLoad(ctx, []string{"--copies", "1", "--warmup", "3", "--count", "12", "--rounds", "2", "--runs", "2", "--concurrency", "2", "--dup", "0.25", "--env", "AWS_LAMBDA_LOG_LEVEL=WARN", "--benchstat", bench}, &out, &errOut)
	if err != nil {
		t.Fatalf("load: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	for _, want := range []string{
		"1 copies of each bootstrap under aws-lambda-rie",
		"receiver round 1: 12 deliveries", "floor    round 1: 12 deliveries",
		"floor    round 2: 12 deliveries", "receiver round 2: 12 deliveries",
		"µs/delivery (RIE ", ", emulators ", ", load ", "; machine ", "emu µs/dlv", "machine µs/dlv", "(the machine's ", "receiver / floor (medians of 2 rounds)", "CPU per delivery",
		"== run 1 of 2", "== run 2 of 2", "receiver / floor over 2 runs (each run's ratio of medians): throughput median ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("load does not say %q:\n%s", want, out.String())
		}
	}
	// The floor opens the second run: its first round comes before the
	// receiver's, and the ratios are still the receiver's over the floor's.
	run1, run2, _ := strings.Cut(out.String(), "== run 2 of 2")
	for _, r := range []struct{ text, first, second string }{
		{run1, "receiver round 1:", "floor    round 1:"},
		{run2, "floor    round 1:", "receiver round 1:"},
	} {
		if i, j := strings.Index(r.text, r.first), strings.Index(r.text, r.second); i < 0 || j < i {
			t.Errorf("want %q before %q in:\n%s", r.first, r.second, r.text)
		}
	}
	if !strings.Contains(run1, "(alternating, receiver first)") || !strings.Contains(run2, "(alternating, floor first)") {
		t.Errorf("the runs do not say which target opens them:\n%s", out.String())
	}
	if !strings.Contains(run2, "receiver / floor (medians of 2 rounds)") {
		t.Errorf("run 2's ratios are not the receiver's over the floor's:\n%s", run2)
	}
	b, err := os.ReadFile(bench)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "BenchmarkLoad/concurrency=2/target="); got != 8 {
		t.Errorf("--benchstat file has %d round lines, want 8 (2 runs of 2 rounds of 2 targets):\n%s", got, b)
	}
}

// TestMakeDeliveriesHasTheSizeAsked: --size gives payloads of that size,
// the provider's largest sample event under it, padded: a checkout when
// it is at least a checkout's size and a customer.created below (a
// checkout cannot be 1 KiB), so a 1 KiB run measures 1 KiB.
func TestMakeDeliveriesHasTheSizeAsked(t *testing.T) {
	for _, tc := range []struct {
		size int
		typ  string
	}{{1024, `"customer.created"`}, {10 << 10, `"checkout.session.completed"`}} {
		d := testDeliveries(t, "stripe", 1, 0, tc.size)[0]
		if len(d.Body) != tc.size || !strings.Contains(string(d.Body), `"type": `+tc.typ) && !strings.Contains(string(d.Body), `"type":`+tc.typ) {
			t.Errorf("--size %d: %d bytes, type %s wanted: %.120s", tc.size, len(d.Body), tc.typ, d.Body)
		}
	}
	if d := testDeliveries(t, "stripe", 1, 0, 0)[0]; !strings.Contains(string(d.Body), `"checkout.session.completed"`) {
		t.Errorf("without --size: %.120s, want a checkout", d.Body)
	}
	var ue *usageError
	if err := cmdLoad(context.Background(), []string{"--provider", "gopay", "--size", "1024"}, io.Discard, io.Discard); !errors.As(err, &ue) {
		t.Errorf("load --size of an id-only provider: %v, want a usage error", err)
	}
}

// TestLoadNullTakesNoStack: a null run compares the floor's bootstrap with
// itself, so it has no use for a running stack or for --floor=false.
func TestLoadNullTakesNoStack(t *testing.T) {
	for _, args := range [][]string{{"--null", "--stack"}, {"--null", "--floor=false"}} {
		var out, errOut strings.Builder
		var ue *usageError
		if err := cmdLoad(context.Background(), args, &out, &errOut); !errors.As(err, &ue) {
			t.Errorf("load %v: %v, want a usage error", args, err)
		}
	}
}

// TestLoadEnvReachesBothBootstraps: every --env is in each target's
// environment, over load's own settings, a later one winning; a malformed
// one, or one with --stack (whose bootstraps load does not start), is a
// usage error.
func TestLoadEnvReachesBothBootstraps(t *testing.T) {
	f := loadFlags{secret: "whsec_x", env: []string{"GOMAXPROCS=1", "AWS_LAMBDA_LOG_LEVEL=WARN", "GODEBUG=a=1,b=2", "GOMAXPROCS=2"}}
	p, _ := providers().Lookup("stripe")
	for _, target := range []string{"receiver", "floor"} {
		env := loadEnv(f, p, target)
		want := map[string]string{
			"STRIPE_WEBHOOK_SECRET": "whsec_x", "AWS_LAMBDA_FUNCTION_NAME": "load-" + target,
			"GOMAXPROCS": "2", "AWS_LAMBDA_LOG_LEVEL": "WARN", "GODEBUG": "a=1,b=2",
		}
		if !maps.Equal(env, want) {
			t.Errorf("%s: environment %v, want %v", target, env, want)
		}
	}
	for _, args := range [][]string{{"--env", "GOMAXPROCS"}, {"--env", "=1"}, {"--env", "A B=1"}, {"--stack", "--env", "GOMAXPROCS=1"}} {
		var out, errOut strings.Builder
		if err := cmdLoad(context.Background(), args, &out, &errOut); err == nil || !strings.Contains(err.Error()+errOut.String(), "env") {
			t.Errorf("load %v: %v (%s), want an error about --env", args, err, errOut.String())
		}
	}
}

// TestRunsSummaryIsTheMedianOfTheRuns: over several runs, load prints the
// median and the range of each run's ratios; --runs is bounded and takes
// no --stack.
func TestRunsSummaryIsTheMedianOfTheRuns(t *testing.T) {
	var out strings.Builder
	printRunsSummary(&out, "receiver", "floor", []loadRatios{
		{throughput: 0.90, p99: 1.2, cpu: 1.10}, {throughput: 1.02, p99: 1.0, cpu: 1.02}, {throughput: 0.96, p99: 1.1, cpu: 1.06},
	})
	want := "receiver / floor over 3 runs (each run's ratio of medians): throughput median 0.96× (0.90-1.02×), p99 median 1.10× (1.00-1.20×), CPU per delivery median 1.06× (1.02-1.10×)\n"
	if out.String() != want {
		t.Errorf("summary\n%q, want\n%q", out.String(), want)
	}
	for _, args := range [][]string{{"--runs", "0"}, {"--runs", "21"}, {"--stack", "--runs", "2"}} {
		var out, errOut strings.Builder
		var ue *usageError
		if err := cmdLoad(context.Background(), args, &out, &errOut); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--runs") {
			t.Errorf("load %v: %v, want a usage error about --runs", args, err)
		}
	}
}
