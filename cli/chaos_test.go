package cli

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dynamodbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/internal/shop"
)

// TestChaosSmallCorpusMatchesTheReference is make test's short chaos run:
// the first 40 events of the committed corpus, delivered twice in shuffled
// order by 8 senders with jitter and a queue copy each, end exactly as one
// in-order delivery left them (make chaos runs all 1,000).
func TestChaosSmallCorpusMatchesTheReference(t *testing.T) {
	chaosOnEmulators(t, 40, []string{"--dup", "2", "--concurrency", "8", "--delay-jitter", "50ms", "--seed", "11"},
		"verdict: SAME: 40 events", "duplicated effects: 0", "chaos           40         80")
}

// TestChaosUnderSQSSendRefused is make test's fault-injection run: 20
// events, twice each, while toxiproxy resets the receiver's SQS
// connection (SendMessage right after the claim) 1 s in every 2.5 s. The
// receiver releases each claim whose message it could not send and
// answers 500; the sender retries as Stripe does; nothing is lost or
// doubled. make faults runs every fault on 200 events.
func TestChaosUnderSQSSendRefused(t *testing.T) {
	chaosOnEmulators(t, 20, []string{"--concurrency", "4", "--delay-jitter", "2s", "--seed", "5", "--fault", "sqs-send-refused"},
		"verdict: SAME: 20 events", "duplicated effects: 0")
}

// chaosOnEmulators runs hookinbox chaos with args on the first n events of
// the committed corpus and on the shared emulators (chaos starts nothing
// when the endpoints are in the environment), checks that it exits 0
// and prints each of want, and returns what it printed.
func chaosOnEmulators(t *testing.T, n int, args []string, want ...string) string {
	t.Helper()
	emulatorsInEnv(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"chaos", "--events", corpusHead(t, n)}, args...), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("chaos exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, w := range want {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
		}
	}
	return stdout.String()
}

func TestChaosUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no events", []string{"chaos"}, "--events FILE.jsonl is required"},
		{"dup 0", []string{"chaos", "--events", "x.jsonl", "--dup", "0"}, "--dup must be at least 1"},
		{"argument", []string{"chaos", "extra"}, `unexpected argument "extra"`},
		{"unknown fault", []string{"chaos", "--events", "x.jsonl", "--fault", "meteor"}, `no fault "meteor"`},
		{"destination remote", []string{"chaos", "--events", "x.jsonl", "--destination", "--url", "http://127.0.0.1:1/"}, "--destination works on the local chaos stack"},
		{"destination-fail alone", []string{"chaos", "--events", "x.jsonl", "--destination-fail", "2"}, "--destination-fail wants --destination"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tc.want)
			}
		})
	}
}

func TestChaosGenerate(t *testing.T) {
	var a, b, stderr bytes.Buffer
	for _, out := range []*bytes.Buffer{&a, &b} {
		if code := run(context.Background(), []string{"chaos", "--generate", "25", "--seed", "3"}, out, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
	if n := strings.Count(a.String(), "\n"); n != 25 || a.String() != b.String() {
		t.Errorf("--generate 25 --seed 3 gave %d lines; the same twice: %v", n, a.String() == b.String())
	}
}

// corpusHead writes the first n lines of the committed chaos corpus,
// testdata/chaos/events.jsonl, to a file in a temporary directory and
// returns its path.
func corpusHead(t *testing.T, n int) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "chaos", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		out.Write(sc.Bytes())
		out.WriteByte('\n')
	}
	dst := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(dst, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestChaosAgainstARunningStack runs `hookinbox chaos --url ... --secret
// ...` as a user runs it against their running stack: here `hookinbox dev`
// on a free 127.0.0.1 port, started and stopped by the test. It checks the
// verdict and the exit status of three runs: deliveries the stack refuses
// (a wrong Stripe secret: nothing lost may pass unnoticed), the right secret
// (SAME), and a stack whose business sent a welcome email twice and
// recorded each send (DIFFERENT, naming the extra record).
func TestChaosAgainstARunningStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hookinbox dev and two chaos stacks on the emulators; run without -short")
	}
	emulatorsInEnv(t)
	const secret = "whsec_chaos_url_test"
	addr, stateFile, _ := startDev(t, "chaosurl", "--secret", secret)

	corpus := corpusHead(t, 20)
	chaos := func(t *testing.T, secret string) (int, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"chaos", "--events", corpus, "--url", "http://" + addr + "/webhooks/stripe",
			"--secret", secret, "--state-file", stateFile, "--concurrency", "4", "--seed", "3"}, &stdout, &stderr)
		if code != 0 && code != 1 {
			t.Fatalf("chaos exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
		}
		return code, stdout.String()
	}
	check := func(t *testing.T, code int, out string, wantCode int, want ...string) {
		t.Helper()
		if code != wantCode {
			t.Errorf("exit %d, want %d", code, wantCode)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("stdout lacks %q", w)
			}
		}
		if t.Failed() {
			t.Logf("stdout:\n%s", out)
		}
	}

	t.Run("wrong secret", func(t *testing.T) {
		// Stripe's 15 events are refused (twice each); the other
		// providers' 5 are signed with the stack's own secrets.
		code, out := chaos(t, "whsec_not_the_stacks")
		check(t, code, out, 1, "30×401", "verdict: DIFFERENT: ",
			"event stripe#evt_chaos00000c: status (none), reference DONE", "business record missing: email")
	})
	t.Run("same", func(t *testing.T) {
		code, out := chaos(t, secret)
		check(t, code, out, 0, "verdict: SAME: 20 events delivered 2 times each",
			"duplicated effects: not visible on a remote stack", "business records compared: those about the corpus's")
	})
	t.Run("a business that sends an email twice", func(t *testing.T) {
		st, err := loadState(stateFile)
		if err != nil {
			t.Fatal(err)
		}
		db, err := st.dynamoDB()
		if err != nil {
			t.Fatal(err)
		}
		table, err := st.table("ShopTable")
		if err != nil {
			t.Fatal(err)
		}
		// The first checkout of the corpus: its email record, and a
		// second one as a business keyed by the send leaves it.
		sh := shop.New(shop.Config{Table: table}, db, nil, nil)
		state, err := sh.State(context.Background())
		if err != nil || len(state.Emails) == 0 {
			t.Fatalf("shop state: %d emails, %v; want the corpus's", len(state.Emails), err)
		}
		e := state.Emails[0]
		_, err = db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &table, Item: map[string]dynamodbtypes.AttributeValue{
			"pk":       &dynamodbtypes.AttributeValueMemberS{Value: "email#" + string(e.Event) + "#resent"},
			"sk":       &dynamodbtypes.AttributeValueMemberS{Value: "email"},
			"event":    &dynamodbtypes.AttributeValueMemberS{Value: string(e.Event)},
			"to":       &dynamodbtypes.AttributeValueMemberS{Value: e.To},
			"template": &dynamodbtypes.AttributeValueMemberS{Value: e.Template},
		}})
		if err != nil {
			t.Fatal(err)
		}
		code, out := chaos(t, secret)
		check(t, code, out, 1, "verdict: DIFFERENT: 1 differences", "business record not in the reference: email {\"event\":\""+string(e.Event)+"\"")
	})
}

// TestChaosWithADestination is make test's destination run: 12 events,
// twice each with queue copies, both runs delivering every event to an
// in-process sink whose chaos copy answers 503 to each event's first
// attempt. Every event reaches the sink verified, again under the same
// webhook-id after the 503, and nothing that was not accepted arrives.
func TestChaosWithADestination(t *testing.T) {
	out := chaosOnEmulators(t, 12, []string{"--dup", "2", "--concurrency", "4", "--seed", "7", "--destination", "--destination-fail", "1"},
		"verdict: SAME: 12 events", "destination (reference run): 12 requests, 12 events delivered, 0 redeliveries, 0 refused")
	m := regexp.MustCompile(`destination \(chaos run\): \d+ requests, (\d+) events delivered, (\d+) redeliveries, (\d+) refused`).FindStringSubmatch(out)
	if m == nil || m[1] != "12" || atoi(m[2]) < 12 || m[3] != "0" {
		t.Errorf("chaos run's destination: %q; want 12 events delivered, each again after its 503 (12 redeliveries or more), none refused", m)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
