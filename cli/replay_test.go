package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestReplayCommandOnTheLocalStack(t *testing.T) {
	emu, st := stackInEnv(t)
	ctx := context.Background()
	store := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	dlq := queue.New(emu.SQS(), st.Queues["EventsDLQ"].URL)
	// One event parked DEAD in the DLQ.
	now := time.Now()
	ev := webhook.Event{Provider: "stripe", ID: "evt_cli", Type: "checkout.session.completed", Created: now, Raw: []byte(`{"id":"evt_cli"}`)}
	it := parkDead(t, store, dlq, ev, "unknown price", 1, nil)

	path := localStateFile(t, emu, st)
	var out, errOut bytes.Buffer
	if err := testApp().cmdReplay(ctx, []string{"--all", "--dry-run", "--state-file", path}, &out, &errOut); err != nil {
		t.Fatalf("replay --all --dry-run: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "would replay") || !strings.Contains(out.String(), "stripe#evt_cli") || !strings.Contains(out.String(), "unknown price") {
		t.Errorf("dry run printed:\n%s", out.String())
	}
	if got, _ := store.Get(ctx, it.Key); got.Status != inbox.Dead {
		t.Errorf("after the dry run: status %s, want DEAD", got.Status)
	}

	out.Reset()
	if err := testApp().cmdReplay(ctx, []string{"--all", "--json", "--state-file", path}, &out, &errOut); err != nil {
		t.Fatalf("replay --all --json: %v\n%s", err, errOut.String())
	}
	var sum replay.Summary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("--json printed %q: %v", out.String(), err)
	}
	if sum.Moved != 1 || len(sum.Events) != 1 || sum.Events[0].Outcome != replay.Replayed {
		t.Errorf("summary %+v", sum)
	}
	if got, _ := store.Get(ctx, it.Key); got.Status != inbox.Failed {
		t.Errorf("after the replay: status %s, want FAILED", got.Status)
	}

	// By bare event ID, with the table and queues given explicitly (as
	// for a stack CloudFormation does not know).
	out.Reset()
	err := testApp().cmdReplay(ctx, []string{"evt_cli", "--dry-run", "--table", st.Tables["InboxTable"],
		"--queue-url", st.Queues["EventsQueue"].URL, "--dlq-url", st.Queues["EventsDLQ"].URL}, &out, &errOut)
	if err != nil || !strings.Contains(out.String(), "would replay") {
		t.Errorf("replay evt_cli --dry-run: %v\n%s", err, out.String())
	}

	var ue *usageError
	if err := testApp().cmdReplay(ctx, []string{"--type", "x"}, &out, &errOut); !errors.As(err, &ue) {
		t.Errorf("replay --type x: %v, want a usage error", err)
	}
}

// TestReplayPrefersTheRunningLocalStack checks that, with a local stack
// running and no --stack, replay goes to the local stack rather than to
// whatever AWS account the default profile or the endpoint variables in
// the shell name.
func TestReplayPrefersTheRunningLocalStack(t *testing.T) {
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	elsewhere := "http://" + closedAddr(t)
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS"} {
		t.Setenv(k, elsewhere)
	}
	// Credentials that would fail against AWS: only the local stack answers.
	t.Setenv("AWS_ACCESS_KEY_ID", "not-a-real-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-a-real-secret")
	path := filepath.Join(t.TempDir(), "state.json")
	state := &devState{
		PID: os.Getpid(), Region: devstack.Region, StackName: st.Name,
		Endpoints: map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": emu.DynamoDBURL, "AWS_ENDPOINT_URL_SQS": emu.SQSURL},
		Env:       emu.EnvMap(),
		Tables:    st.Tables,
		Queues: map[string]stateQueue{
			"EventsQueue": {URL: st.Queues["EventsQueue"].URL},
			"EventsDLQ":   {URL: st.Queues["EventsDLQ"].URL},
		},
	}
	if err := writeState(path, state); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := testApp().cmdReplay(context.Background(), []string{"--all", "--dry-run", "--state-file", path}, &out, &errOut); err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "using the local stack") {
		t.Errorf("stderr = %q, want it to say it used the local stack", errOut.String())
	}
}
