package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
)

// TestChaosSmallCorpusMatchesTheReference is make test's short chaos run:
// the first 40 events of the committed corpus, delivered twice in shuffled
// order by 8 senders with jitter and a queue copy each, end exactly as one
// in-order delivery left them (make chaos runs all 1,000).
func TestChaosSmallCorpusMatchesTheReference(t *testing.T) {
	emu := devstacktest.ForTest(t)
	// chaos starts nothing when the endpoints are in the environment.
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", emu.DynamoDBURL)
	t.Setenv("AWS_ENDPOINT_URL_SQS", emu.SQSURL)
	corpus := firstLines(t, filepath.Join("..", "..", "testdata", "chaos", "events.jsonl"), 40)

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chaos", "--events", corpus, "--dup", "2", "--concurrency", "8",
		"--delay-jitter", "50ms", "--seed", "11"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("chaos exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"verdict: SAME: 40 events", "duplicated effects: 0", "chaos           40         80"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestChaosUnderSQSSendRefused is make test's fault-injection run: 20
// events, twice each, while toxiproxy resets the receiver's SQS
// connection (SendMessage right after the claim) 1 s in every 2.5 s. The
// receiver releases each claim whose message it could not send and
// answers 500; the sender retries as Stripe does; nothing is lost or
// doubled. make faults runs every fault on 200 events.
func TestChaosUnderSQSSendRefused(t *testing.T) {
	emu := devstacktest.ForTest(t)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", emu.DynamoDBURL)
	t.Setenv("AWS_ENDPOINT_URL_SQS", emu.SQSURL)
	corpus := firstLines(t, filepath.Join("..", "..", "testdata", "chaos", "events.jsonl"), 20)

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chaos", "--events", corpus, "--concurrency", "4",
		"--delay-jitter", "2s", "--seed", "5", "--fault", "sqs-send-refused"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("chaos exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"verdict: SAME: 20 events", "duplicated effects: 0"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
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

// firstLines writes the first n lines of path to a file in a temporary
// directory and returns its path.
func firstLines(t *testing.T, path string, n int) string {
	t.Helper()
	f, err := os.Open(path)
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
