package devstack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	riePackage = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"
	rieModule  = "github.com/aws/aws-lambda-runtime-interface-emulator"

	// invocationsPath is where the RIE takes invocations, as `sam local
	// start-lambda` and the Lambda Invoke API do.
	invocationsPath = "/2015-03-31/functions/function/invocations"
)

// errFunction is wrapped by the error Invoke returns when the function ran
// and returned an error (the Lambda Invoke API's FunctionError).
var errFunction = errors.New("function returned an error")

// Function is a Lambda function's bootstrap running under the Runtime
// Interface Emulator (aws-lambda-rie), as `sam local` runs it in its
// container. Its methods are safe for concurrent use; Invoke lets one
// invocation at a time through, as the RIE (one Lambda execution
// environment) takes them.
type Function struct {
	// URL is the invocation endpoint,
	// http://127.0.0.1:P/2015-03-31/functions/function/invocations.
	URL string

	proc   *child
	client *http.Client
	mu     sync.Mutex // held by Invoke
}

// StartFunction runs the RIE, built from the version pinned in go.mod, with
// bootstrapPath as the runtime, listening on a free port of 127.0.0.1 (its
// Runtime API on another). The function sees env plus the variables Lambda
// sets (AWS_LAMBDA_FUNCTION_NAME, _HANDLER, LAMBDA_TASK_ROOT, TZ, ...) and
// nothing of this process's environment, as in Lambda; pass Emulators.EnvMap
// and Stack.FunctionEnv in env. The RIE starts the bootstrap at the first
// invocation. StartFunction returns once the RIE answers HTTP.
func StartFunction(ctx context.Context, bootstrapPath string, env map[string]string, opts Options) (*Function, error) {
	bootstrap, err := filepath.Abs(bootstrapPath)
	if err != nil {
		return nil, fmt.Errorf("start function: %w", err)
	}
	if fi, err := os.Stat(bootstrap); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("start function: %s is not an executable file", bootstrap)
	}
	rie, err := rieBinary(ctx, opts.Root)
	if err != nil {
		return nil, fmt.Errorf("start function: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}

	// The ports are free when picked and taken by the RIE a moment later;
	// if another process wins the race the RIE exits and we try again.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		f, err := startRIE(ctx, rie, bootstrap, env, opts)
		if err == nil {
			return f, nil
		}
		lastErr = err
		if ctx.Err() != nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, fmt.Errorf("start function %s: %w", bootstrap, lastErr)
}

func startRIE(ctx context.Context, rie, bootstrap string, env map[string]string, opts Options) (*Function, error) {
	apiPort, err := freePort()
	if err != nil {
		return nil, err
	}
	rtPort, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(apiPort))
	cmd := exec.Command(rie,
		"--log-level", "warn",
		"--runtime-interface-emulator-address", addr,
		"--runtime-api-address", net.JoinHostPort("127.0.0.1", strconv.Itoa(rtPort)),
		bootstrap)
	cmd.Dir = filepath.Dir(bootstrap)
	cmd.Env = envList(functionEnv(bootstrap, env))
	proc, err := startChild(cmd, opts.Stdout, opts.Stderr)
	if err != nil {
		return nil, err
	}
	f := &Function{
		URL:    "http://" + addr + invocationsPath,
		proc:   proc,
		client: &http.Client{},
	}
	if err := waitHTTP(ctx, "http://"+addr+"/", proc); err != nil {
		_ = f.Stop()
		return nil, err
	}
	return f, nil
}

// functionEnv is env with the variables Lambda and `sam local` set filled in
// where env leaves them out. The RIE passes its whole environment on to the
// function.
func functionEnv(bootstrap string, env map[string]string) map[string]string {
	out := map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME":        "function",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     "30",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/function",
		"AWS_LAMBDA_LOG_STREAM_NAME":      "$LATEST",
		"AWS_REGION":                      Region,
		"AWS_DEFAULT_REGION":              Region,
		"LAMBDA_TASK_ROOT":                filepath.Dir(bootstrap),
		"_HANDLER":                        "bootstrap",
		"TZ":                              ":UTC",
		"LANG":                            "en_US.UTF-8",
		"PATH":                            "/usr/local/bin:/usr/bin:/bin",
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}

// Invoke invokes the function with payload and returns its response. If the
// function returned an error, the response (the error document) comes back
// together with an error wrapping errFunction.
func (f *Function) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.URL, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("invoke: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		if f.proc.exited() {
			return nil, fmt.Errorf("invoke: %w", f.proc.exitError("aws-lambda-rie"))
		}
		return nil, fmt.Errorf("invoke: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("invoke: read response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("invoke: status %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	if fe := resp.Header.Get("X-Amz-Function-Error"); fe != "" || isErrorDocument(body) {
		return body, fmt.Errorf("invoke: %w: %s", errFunction, bytes.TrimSpace(body))
	}
	return body, nil
}

// isErrorDocument reports whether body is the error document a runtime
// returns for a handler error ({"errorMessage", "errorType", ...}); the RIE
// sends it with status 200 and drops the X-Amz-Function-Error header.
func isErrorDocument(body []byte) bool {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return false
	}
	_, msg := doc["errorMessage"]
	_, typ := doc["errorType"]
	if !msg || !typ {
		return false
	}
	for k := range doc {
		switch k {
		case "errorMessage", "errorType", "stackTrace", "cause":
		default:
			return false
		}
	}
	return true
}

// PID returns the process ID of the RIE.
func (f *Function) PID() int { return f.proc.pid() }

// CPUTime returns the CPU time (user + system, all threads) the RIE and
// the function's runtime processes (the bootstrap, started by the RIE at
// the first invocation) have used so far, read from /proc/<pid>/stat
// (Linux only; elsewhere an error). The kernel counts it in clock ticks of
// 10 ms, so read it over many invocations. A runtime process that has
// exited (killed, or restarted by the RIE) no longer counts.
func (f *Function) CPUTime() (rie, runtime time.Duration, err error) {
	rie, err = ProcessCPU(f.proc.pid())
	if err != nil {
		return 0, 0, fmt.Errorf("cpu time of aws-lambda-rie: %w", err)
	}
	for _, pid := range childPIDs(f.proc.pid()) {
		d, err := ProcessCPU(pid)
		if err != nil {
			continue // gone since it was listed
		}
		runtime += d
	}
	return rie, runtime, nil
}

// RuntimePeakRSS returns the most resident memory the function's runtime
// process (the bootstrap) has held since it started, in bytes: VmHWM in
// /proc/<pid>/status (Linux only; elsewhere an error). It is what
// Lambda's MemorySize must hold.
func (f *Function) RuntimePeakRSS() (int64, error) {
	var peak int64
	for _, pid := range childPIDs(f.proc.pid()) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue // gone since it was listed
		}
		for _, line := range strings.Split(string(b), "\n") {
			if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(kb), " kB"), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("/proc/%d/status: VmHWM %q", pid, kb)
				}
				peak = max(peak, n<<10)
			}
		}
	}
	if peak == 0 {
		return 0, errors.New("peak memory: the function has no runtime process (not invoked yet, or gone), or no /proc")
	}
	return peak, nil
}

// Stop stops the RIE and the function's runtime process (which the RIE puts
// in a process group of its own) and waits for the RIE to exit. It is
// idempotent.
func (f *Function) Stop() error {
	runtimes := childGroups(f.proc.pid())
	if err := f.proc.stop(2*time.Second, runtimes...); err != nil {
		return fmt.Errorf("stop function: %w", err)
	}
	return nil
}

// rieBinary returns the path of aws-lambda-rie built from the version in
// go.mod for this host (see toolBinary).
func rieBinary(ctx context.Context, root string) (string, error) {
	return toolBinary(ctx, root, rieModule, riePackage)
}

// envList formats env as sorted KEY=value strings.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// KillRuntime sends SIGKILL to the function's runtime process (the
// bootstrap and whatever it started), as an out-of-memory kill or a crash
// does, and returns the process IDs it killed; none is an error. The RIE
// keeps running: the invocation in flight fails, and the RIE starts the
// bootstrap again for the next one, as Lambda starts a new environment.
func (f *Function) KillRuntime() ([]int, error) {
	var killed []int
	for _, pid := range childPIDs(f.proc.pid()) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			killed = append(killed, pid)
		}
	}
	if len(killed) == 0 {
		return nil, errors.New("kill runtime: the function has no runtime process (not invoked yet, or already gone)")
	}
	return killed, nil
}
