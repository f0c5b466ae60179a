package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestEndToEnd drives `hookinbox dev --rie` as a user would: it builds the
// CLI, starts the stack on a free port with its own state file, sends the
// same signed event three times, checks the shop and the inbox, stops the
// stack with SIGINT and checks that none of its processes survive.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: runs hookinbox dev --rie (emulators, aws-lambda-rie); run without -short")
	}
	begin := time.Now()
	dir := t.TempDir()
	bin := filepath.Join(dir, "hookinbox")
	build := exec.Command("go", "build", "-o", bin, "../cmd/hookinbox")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/hookinbox: %v\n%s", err, out)
	}
	stateFile := filepath.Join(dir, "state.json")
	addr := freeAddr(t)

	var logs pipelinetest.SyncBuffer
	dev := exec.Command(bin, "dev", "--rie", "--addr", addr, "--state-file", stateFile,
		"--stack-name", "e2e"+devstack.UniqueStackName()[1:])
	dev.Stdout, dev.Stderr = &logs, &logs
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed when dev has exited; then waitErr is set
	var waitErr error
	go func() { waitErr = dev.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = dev.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("hookinbox dev output:\n%s", logs.String())
		}
	})

	// Ready?
	// Generous: with a cold build cache, building the functions for the
	// first time takes most of it on two cores.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := waitHealthy(ctx, "http://"+addr+"/healthz", exited); err != nil {
		t.Fatal(err)
	}
	t.Logf("stack ready after %v", time.Since(begin).Round(time.Millisecond))

	hookinbox := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append(args, "--state-file", stateFile)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return string(out), fmt.Errorf("hookinbox %s: %v\n%s%s", strings.Join(args, " "), err, out, &stderr)
		}
		return string(out), nil
	}

	// dev created the template's body bucket on its S3 server.
	if st, err := loadState(stateFile); err != nil {
		t.Error(err)
	} else if st.Buckets["BodyBucket"] == "" {
		t.Errorf("state file: buckets %v; want BodyBucket", st.Buckets)
	} else if cfg, err := st.awsConfig(); err != nil {
		t.Error(err)
	} else if _, err := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }).HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(st.Buckets["BodyBucket"])}); err != nil {
		t.Errorf("BodyBucket %s on dev's S3 server: %v", st.Buckets["BodyBucket"], err)
	}

	// The same event three times: one accepted, two duplicates.
	id := "evt_e2e" + strconv.FormatInt(time.Now().UnixNano(), 36)
	out, err := hookinbox("send", "stripe", "checkout.session.completed", "--times", "3", "--id", id)
	if err != nil {
		t.Fatal(err)
	}
	if a, d := strings.Count(out, "→ accepted"), strings.Count(out, "→ duplicate"); a != 1 || d != 2 {
		t.Errorf("send --times 3: %d accepted, %d duplicates, want 1 and 2:\n%s", a, d, out)
	}
	// send prints the inspect command to paste (the README's walkthrough).
	if want := "see it: hookinbox inspect 'stripe#" + id + "'\n"; !strings.HasSuffix(out, want) {
		t.Errorf("send output does not end with %q:\n%s", want, out)
	}
	// A wrong secret is refused and nothing is claimed.
	if out, err := hookinbox("send", "stripe", "checkout.session.completed", "--secret", "whsec_wrong"); err == nil || !strings.Contains(out, "401") {
		t.Errorf("send with a wrong secret: %v, want exit 1 and a 401:\n%s", err, out)
	}

	// The shop: one entitlement, one email, one invoice.
	var state shop.State
	for {
		out, err := hookinbox("state", "--json")
		if err != nil {
			t.Fatal(err)
		}
		state = shop.State{}
		if err := json.Unmarshal([]byte(out), &state); err != nil {
			t.Fatalf("state --json is not JSON only: %v\n%s", err, out)
		}
		if len(state.Invoices) > 0 || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The dev log names each delivery's event and the receiver's answer,
	// and the outcome with the key.
	for _, logLine := range []string{
		"POST /webhooks/stripe → 200 accepted stripe#" + id + " (checkout.session.completed)",
		"POST /webhooks/stripe → 200 duplicate stripe#" + id + " (checkout.session.completed)",
		"stripe#" + id + " done",
	} {
		if !waitFor(ctx, func() bool { return strings.Contains(logs.String(), logLine) }) {
			t.Errorf("the dev log has no %q line", logLine)
		}
	}
	if len(state.Entitlements) != 1 || len(state.Emails) != 1 || len(state.Invoices) != 1 {
		t.Errorf("shop state: %d entitlements, %d emails, %d invoices; want 1 of each\n%+v",
			len(state.Entitlements), len(state.Emails), len(state.Invoices), state)
	}

	// The inbox item is DONE with its three effects.
	out, err = hookinbox("inspect", "stripe#"+id, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got inspection
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, out)
	}
	var names []string
	for _, r := range got.Effects {
		names = append(names, r.Effect)
	}
	if got.Item.Status != "DONE" || got.Item.Attempts != 1 || strings.Join(names, ",") != "create-invoice,grant-access,welcome-email" {
		t.Errorf("inspect: status %s, attempts %d, effects %v; want DONE after 1 attempt with create-invoice, grant-access, welcome-email", got.Item.Status, got.Item.Attempts, names)
	}
	if out, err := hookinbox("inspect", "stripe#"+id); err != nil || !strings.Contains(out, "Effects done: 3") {
		t.Errorf("inspect (readable): %v\n%s", err, out)
	}

	// status: the counts the real bootstraps recorded, JSON only.
	var status statusReport
	if !waitFor(ctx, func() bool {
		out, err := hookinbox("status", "--json")
		if err != nil {
			t.Fatal(err)
		}
		status = statusReport{}
		if err := json.Unmarshal([]byte(out), &status); err != nil {
			t.Fatalf("status --json is not JSON only: %v\n%s", err, out)
		}
		return status.Counts[metrics.Processed] == 1
	}) {
		t.Errorf("status never counted the processed event: %+v", status)
	}
	wantCounts := map[string]float64{
		metrics.Received: 3, metrics.Duplicate: 2, metrics.VerifyFailed: 1, metrics.Enqueued: 1,
		metrics.Processed: 1, metrics.Failed: 0, metrics.Parked: 0,
	}
	for name, want := range wantCounts {
		if got := status.Counts[name]; got != want {
			t.Errorf("status counts %s = %v, want %v", name, got, want)
		}
	}
	if status.Source != "local" || status.DLQ.total() != 0 || len(status.Replay) != 0 || status.StuckClaims != 0 || len(status.Problems) != 0 {
		t.Errorf("status %+v; want the local stack, an empty DLQ, nothing stuck, no problems", status)
	}
	// With an event in the DLQ, status says which command replays it.
	st, err := loadState(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := st.awsConfig()
	if err != nil {
		t.Fatal(err)
	}
	env := queue.Envelope{Key: webhook.NewKey("stripe", id), Type: "checkout.session.completed"}
	if err := queue.New(sqs.NewFromConfig(cfg), st.Queues["EventsDLQ"].URL).Park(ctx, env.Marshal(), env, "test: parked by hand", 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	out, err = hookinbox("status")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DLQ", "1 parked", "Processed        1", "VerifyFailed     1", "hookinbox replay --all --dry-run --state-file " + stateFile} {
		if !strings.Contains(out, want) {
			t.Errorf("status does not say %q:\n%s", want, out)
		}
	}

	// hookinbox reconcile: a GoPay payment notified while AUTHORIZED, then
	// paid without a notification, is fetched and applied once.
	const payment = "3000009001"
	setPayment := func(state string) {
		t.Helper()
		body := `{"id":` + payment + `,"order_number":"order-e2e","state":"` + state + `","amount":700,"currency":"CZK"}`
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, strings.TrimSuffix(st.Endpoints["GOPAY_API_URL"], "/api")+"/_standin/payments/"+payment, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("set payment %s: %v %v", state, resp, err)
		}
		resp.Body.Close()
	}
	setPayment("AUTHORIZED")
	if out, err := hookinbox("send", "gopay", payment); err != nil || !strings.Contains(out, "accepted") {
		t.Fatalf("send gopay: %v\n%s", err, out)
	}
	if !waitFor(ctx, func() bool {
		out, err := hookinbox("inspect", "gopay#"+payment, "--json")
		var got inspection
		return err == nil && json.Unmarshal([]byte(out), &got) == nil && got.Item.Status == "IGNORED"
	}) {
		t.Fatal("the AUTHORIZED payment's notification was never processed")
	}
	setPayment("PAID")
	out, err = hookinbox("reconcile", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sum reconcile.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("reconcile --json is not JSON only: %v\n%s", err, out)
	}
	var gopay *reconcile.ProviderRun
	for i := range sum.Providers {
		if sum.Providers[i].Provider == "gopay" {
			gopay = &sum.Providers[i]
		}
	}
	if gopay == nil || gopay.Missed != 1 || len(sum.Errors) != 0 {
		t.Errorf("reconcile: %+v, want the GoPay source to hand on 1 payment, no errors", sum)
	}
	if !waitFor(ctx, func() bool {
		out, err := hookinbox("state", "--json")
		var state shop.State
		if err != nil || json.Unmarshal([]byte(out), &state) != nil {
			return false
		}
		return slices.ContainsFunc(state.Orders, func(o shop.Order) bool { return o.Payment == payment && o.Status == shop.OrderPaid })
	}) {
		t.Error("the payment paid without a notification never reached the shop")
	}
	if out, err := hookinbox("reconcile"); err != nil || !strings.Contains(out, "gopay         listed 0, missed 0") {
		t.Errorf("reconcile again: %v, want nothing fetched:\n%s", err, out)
	}

	// Paddle and Mollie through send, on the real bootstraps: a completed
	// Paddle transaction sent twice, and a Mollie payment staged on the
	// stand-in and notified twice, each mark their order paid once.
	if out, err := hookinbox("send", "paddle", "../testdata/paddle/transaction.completed.json", "--times", "2"); err != nil ||
		strings.Count(out, "→ accepted") != 1 || strings.Count(out, "→ duplicate") != 1 {
		t.Errorf("send paddle --times 2: %v, want one accepted, one duplicate:\n%s", err, out)
	}
	const molliePayment = "tr_5B8cwPMGnU6qLbRvo7qEZo"
	if out, err := hookinbox("send", "mollie", "../testdata/mollie/payment.paid.json"); err != nil || !strings.Contains(out, "→ accepted") {
		t.Errorf("send mollie: %v\n%s", err, out)
	}
	finished := func(key string) bool {
		out, err := hookinbox("inspect", key, "--json")
		var got inspection
		return err == nil && json.Unmarshal([]byte(out), &got) == nil && got.Item.Status == "DONE"
	}
	if !waitFor(ctx, func() bool { return finished("mollie#" + molliePayment) }) {
		t.Fatal("the Mollie notification was never processed")
	}
	if out, err := hookinbox("send", "mollie", molliePayment); err != nil || !strings.Contains(out, "→ accepted") {
		t.Errorf("send mollie again after it finished: %v, want accepted (fetched again)\n%s", err, out)
	}
	if !waitFor(ctx, func() bool {
		return finished("paddle#evt_01hv8x2acma6xvfynhhb0s8z7c") && finished("mollie#"+molliePayment)
	}) {
		t.Fatal("the Paddle event or the second Mollie notification was never processed")
	}
	out, err = hookinbox("state", "--json")
	var orders shop.State
	if err != nil || json.Unmarshal([]byte(out), &orders) != nil {
		t.Fatalf("state: %v\n%s", err, out)
	}
	for _, want := range []shop.Order{
		{Provider: "paddle", Payment: "txn_01hv8wptq8987qeep44cyrewp9", Reference: "order-1042", Status: shop.OrderPaid, Amount: 3300, Currency: "USD"},
		{Provider: "mollie", Payment: molliePayment, Reference: "order-2024", Status: shop.OrderPaid, Amount: 7500, Currency: "EUR"},
	} {
		if !slices.Contains(orders.Orders, want) {
			t.Errorf("state orders %+v, want %+v among them", orders.Orders, want)
		}
	}
	var mollieItem inspection
	if out, err := hookinbox("inspect", "mollie#"+molliePayment, "--json"); err != nil || json.Unmarshal([]byte(out), &mollieItem) != nil || len(mollieItem.Effects) != 1 {
		t.Errorf("inspect mollie#%s: %v, effects %+v; want mark-order-paid once", molliePayment, err, mollieItem.Effects)
	}

	// A short load run: the receiver (its bootstrap under the RIE) beside
	// the floor program, on the stack's emulators.
	out, err = hookinbox("load", "--stack", "--warmup", "5", "--count", "20", "--rounds", "1", "--concurrency", "2", "--dup", "0.2")
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	for _, want := range []string{"receiver round 1: 20 deliveries", "floor    round 1: 20 deliveries", "receiver / floor"} {
		if !strings.Contains(out, want) {
			t.Errorf("load does not say %q:\n%s", want, out)
		}
	}

	// Stop with SIGINT, as Ctrl-C does; every process of the tree must go.
	pids := devstack.Descendants(dev.Process.Pid)
	if len(pids) < 3 {
		t.Errorf("process tree of hookinbox dev --rie has %d processes (%v); want node and an aws-lambda-rie per function at least", len(pids), pids)
	}
	if err := dev.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("hookinbox dev exited with %v after SIGINT, want status 0", waitErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("hookinbox dev did not exit within 30s of SIGINT")
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for devstack.ProcessAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if devstack.ProcessAlive(pid) {
			t.Errorf("process %d (%s) survived hookinbox dev", pid, comm(pid))
		}
	}
	if _, err := os.Stat(stateFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file %s left behind (%v)", stateFile, err)
	}
	t.Logf("end to end in %v", time.Since(begin).Round(time.Millisecond))
}

// waitHealthy polls url until it answers 200, the process exits or ctx ends.
func waitHealthy(ctx context.Context, url string, exited <-chan struct{}) error {
	last := "no answer"
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		}
		select {
		case <-exited:
			return errors.New("hookinbox dev exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %v (last answer: %s)", url, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}

// waitFor polls cond until it holds or ctx ends, and reports whether it held.
func waitFor(ctx context.Context, cond func() bool) bool {
	for !cond() {
		select {
		case <-ctx.Done():
			return cond()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true
}
