package devstack

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// buildEcho builds testdata/echo for this host, as the Makefile builds a
// function: -tags lambda.norpc, named bootstrap.
func buildEcho(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", out, "./testdata/echo")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/echo: %v\n%s", err, b)
	}
	return out
}

func TestStartFunction(t *testing.T) {
	skipShort(t, "aws-lambda-rie, built here")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bootstrap := buildEcho(t)

	begin := time.Now()
	f, err := StartFunction(ctx, bootstrap, map[string]string{"GREETING": "hello", "AWS_LAMBDA_FUNCTION_NAME": "Echo"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Stop() })
	t.Logf("RIE answered after %v at %s", time.Since(begin).Round(time.Millisecond), f.URL)

	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{"echo", map[string]any{"a": "b", "n": 1.0}, map[string]any{"a": "b", "n": 1.0}},
		{"env", map[string]any{"env": "GREETING"}, map[string]any{"env": "GREETING", "envValue": "hello"}},
		{"function name", map[string]any{"env": "AWS_LAMBDA_FUNCTION_NAME"}, map[string]any{"env": "AWS_LAMBDA_FUNCTION_NAME", "envValue": "Echo"}},
		{"host env hidden", map[string]any{"env": "HOME"}, map[string]any{"env": "HOME", "envValue": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, _ := json.Marshal(tt.in)
			out, err := f.Invoke(ctx, payload)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("response %s: %v", out, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Invoke = %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("Invoke()[%s] = %v, want %v", k, got[k], v)
				}
			}
		})
	}

	out, err := f.Invoke(ctx, []byte(`{"fail":"boom"}`))
	if !errors.Is(err, errFunction) {
		t.Errorf("Invoke of a failing handler: %s, %v; want ErrFunction", out, err)
	}

	// The RIE started the runtime at the first invocation, in a process
	// group of its own; Stop must end both.
	riePID := f.PID()
	runtimes := childPIDs(riePID)
	if len(runtimes) == 0 && runtime.GOOS == "linux" {
		t.Fatalf("no runtime process under the RIE (pid %d)", riePID)
	}
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	if ProcessAlive(riePID) {
		t.Errorf("RIE %d still running after Stop", riePID)
	}
	for _, pid := range runtimes {
		// The runtime was a grandchild; give init a moment to reap it.
		for deadline := time.Now().Add(2 * time.Second); ProcessAlive(pid) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if ProcessAlive(pid) {
			t.Errorf("runtime %d still running after Stop", pid)
		}
	}
	if err := f.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := f.Invoke(ctx, []byte(`{}`)); err == nil {
		t.Error("Invoke after Stop succeeded")
	}
}

func TestBuildFunction(t *testing.T) {
	skipShort(t, "make")
	if _, err := os.Stat("../../../functions/receiver"); err != nil {
		t.Skip("no functions/receiver yet")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not in PATH")
	}
	if out, err := exec.Command("make", "-C", "../../..", "-n", "build-ReceiverFunction").CombinedOutput(); err != nil {
		t.Skipf("no Makefile target build-ReceiverFunction yet: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bootstrap, err := BuildFunction(ctx, "ReceiverFunction", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := StartFunction(ctx, bootstrap, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
}
