package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestDevForwardDeliversToTheSink runs hookinbox sink and hookinbox dev
// --forward as a user does, in two terminals: a Stripe event sent twice
// reaches the sink once, verified, under its stable webhook-id, and the
// banner names the destination and the sink command.
func TestDevForwardDeliversToTheSink(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hookinbox dev on the emulators; run without -short")
	}
	emulatorsInEnv(t)
	sinkURL, sinkOut := startSink(t, "--secret", pipeline.DestinationSecret)
	_, stateFile, devOut := startDev(t, "fwd", "--forward", sinkURL)
	sinkAddr := strings.TrimSuffix(strings.TrimPrefix(sinkURL, "http://"), "/")
	for _, want := range []string{
		"signed with " + pipeline.DestinationSecret,
		"forward      " + sinkURL + "   *",
		"sink --addr " + sinkAddr + " --secret " + pipeline.DestinationSecret,
	} {
		if !strings.Contains(devOut.String(), want) {
			t.Errorf("banner lacks %q", want)
		}
	}

	var sendOut, sendErr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if code := run(ctx, []string{"send", "stripe", "checkout.session.completed", "--times", "2", "--state-file", stateFile}, &sendOut, &sendErr); code != 0 {
		t.Fatalf("send exit %d: %s%s", code, sendOut.String(), sendErr.String())
	}
	m := regexp.MustCompile(`stripe#evt_\w+`).FindString(sendOut.String())
	if m == "" {
		t.Fatalf("send printed no key:\n%s", sendOut.String())
	}
	key := webhook.Key(m)
	want := "200 webhook-id=" + destination.WebhookID(key, pipeline.ForwardName) + " provider=stripe type=checkout.session.completed key=" + m + " first delivery\n"
	if !waitFor(ctx, func() bool { return strings.Contains(sinkOut.String(), want) }) {
		t.Fatalf("the sink never printed %q:\n%s", want, sinkOut.String())
	}
	if n := strings.Count(sinkOut.String(), "key="+m+" "); n != 1 || strings.Contains(sinkOut.String(), "refused") {
		t.Errorf("the sink got %d deliveries of %s, want 1 and no refusal:\n%s", n, m, sinkOut.String())
	}
}

// startDev runs hookinbox dev with args, on a free address with a state
// file and a stack name (prefix and a unique suffix) of its own, until the
// test ends, and waits until it is healthy. It returns the address, the
// state file and dev's output, logged when the test fails.
func startDev(t *testing.T, prefix string, args ...string) (string, string, *pipelinetest.SyncBuffer) {
	t.Helper()
	stateFile, addr := filepath.Join(t.TempDir(), "state.json"), freeAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	var out pipelinetest.SyncBuffer
	exited, code := make(chan struct{}), 0
	go func() {
		code = run(ctx, append([]string{"dev", "--addr", addr, "--state-file", stateFile,
			"--stack-name", prefix + devstack.UniqueStackName()[1:]}, args...), &out, &out)
		close(exited)
	}()
	t.Cleanup(func() {
		stop()
		<-exited
		if code != 0 || t.Failed() {
			t.Logf("hookinbox dev exit %d, output:\n%s", code, out.String())
		}
	})
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := waitHealthy(wctx, "http://"+addr+"/healthz", exited); err != nil {
		t.Fatal(err)
	}
	return addr, stateFile, &out
}
