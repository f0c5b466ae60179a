package custombusiness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the writes of a child process and
// the reads of the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// crmCalls counts the fake CRM's requests by path, and refuses those of
// refuse (422).
type crmCalls struct {
	mu     sync.Mutex
	paths  map[string]int
	refuse string
}

func (c *crmCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.paths[r.URL.Path]++
	refused := r.URL.Path == c.refuse
	c.mu.Unlock()
	if refused {
		w.WriteHeader(http.StatusUnprocessableEntity)
		return
	}
	_, _ = w.Write([]byte(`{"id":"crm_1"}`))
}

func (c *crmCalls) setRefuse(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refuse = path
}

func (c *crmCalls) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paths[path]
}

// TestMakeDev runs `make dev` as a team does, sends one event of each
// provider the business handles with `hookinbox send`, and waits until
// `hookinbox inspect` shows the checkout DONE with its effects and the
// order DEAD (the CRM refused it), and the warehouse shipment DONE (sent by
// this module's own CLI, which knows its provider); then, the CRM fixed, `hookinbox replay`
// sends the order back and it ends DONE. Ctrl-C (SIGINT) stops the stack.
func TestMakeDev(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds the functions and runs the local stack")
	}
	crm := &crmCalls{paths: map[string]int{}, refuse: "/orders"}
	srv := httptest.NewServer(crm)
	defer srv.Close()
	state := filepath.Join(t.TempDir(), "dev.json")

	var log syncBuffer
	// A port and a stack name of its own: the emulators may be shared
	// (AWS_ENDPOINT_URL*), and so may the machine.
	stack := fmt.Sprintf("t%d", time.Now().UnixNano()%1e9)
	dev := exec.Command("make", "dev", "CRM_URL="+srv.URL, "DEV_FLAGS=--addr 127.0.0.1:0 --stack-name "+stack+" --state-file "+state+" --parameter WarehouseWebhookSecret=whsec_dev_warehouse")
	dev.Stdout, dev.Stderr = &log, &log
	dev.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- dev.Wait() }()
	defer func() {
		_ = syscall.Kill(-dev.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
			// make itself dies of the SIGINT; the stack says it stopped.
			if !strings.Contains(log.String(), "stopped; nothing left running") {
				t.Errorf("make dev after Ctrl-C did not say it stopped everything:\n%s", log.String())
			}
		case <-time.After(time.Minute):
			_ = syscall.Kill(-dev.Process.Pid, syscall.SIGKILL)
			t.Errorf("make dev did not stop within a minute of Ctrl-C\n%s", log.String())
		}
	}()

	// The first run builds four functions: allow it minutes.
	waitFor(t, 5*time.Minute, "the stack to be ready", &log, exited, func() bool {
		_, err := os.Stat(state)
		return err == nil
	})

	hookinbox := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"tool", "hookinbox"}, append(args, "--state-file", state)...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr // which stack it reads: not part of the output
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hookinbox %v: %v\n%s%s\ndev log:\n%s", args, err, out, stderr.String(), log.String())
		}
		return string(out)
	}
	sendKey := regexp.MustCompile(`hookinbox inspect '([^']+)'`)
	var keys []string
	for _, args := range [][]string{
		{"send", "stripe", "checkout.session.completed"},
		{"send", "shopify", "testdata/orders_paid.json"},
		{"send", "warehouse", "shipment.dispatched"}, // this module's own provider, signed by its CLI
	} {
		out := hookinbox(args...)
		m := sendKey.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("hookinbox %v printed no key:\n%s", args, out)
		}
		keys = append(keys, m[1])
	}
	var got struct {
		Item    struct{ Status string }
		Effects []struct{ Effect string }
	}
	until := func(key, status string) {
		t.Helper()
		waitFor(t, time.Minute, key+" "+status, &log, exited, func() bool {
			if err := json.Unmarshal([]byte(hookinbox("inspect", key, "--json")), &got); err != nil {
				t.Fatalf("inspect --json: %v", err)
			}
			return got.Item.Status == status
		})
	}
	until(keys[2], "DONE")
	until(keys[0], "DONE")
	if len(got.Effects) != 2 {
		t.Errorf("%s is DONE with effects %v, want save-contact and crm-notify", keys[0], got.Effects)
	}
	until(keys[1], "DEAD")
	crm.setRefuse("")
	hookinbox("replay", "--all")
	until(keys[1], "DONE")
	if len(got.Effects) != 1 {
		t.Errorf("%s is DONE with effects %v, want crm-order", keys[1], got.Effects)
	}
	if crm.count("/contacts") != 1 || crm.count("/orders") != 2 || crm.count("/shipments") != 1 {
		t.Errorf("the CRM got %v, want one contact, one shipment, and the order refused once and then taken", crm.paths)
	}
}

// waitFor polls done until it holds, failing the test after within or
// when the stack exits.
func waitFor(t *testing.T, within time.Duration, what string, log *syncBuffer, exited <-chan error, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for !done() {
		select {
		case err := <-exited:
			t.Fatalf("make dev exited (%v) while waiting for %s:\n%s", err, what, log.String())
		case <-ctx.Done():
			t.Fatalf("no %s within %v:\n%s", what, within, log.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
