package devstack

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"time"
)

const (
	stripeMockModule  = "github.com/stripe/stripe-mock"
	stripeMockPackage = "github.com/stripe/stripe-mock"
)

// StripeMock is a running stripe-mock, Stripe's own API mock: it checks
// every request against Stripe's OpenAPI specification (unknown parameters
// and wrong types get 400, as the real API answers them) and answers with
// fixture objects. It keeps no state; use internal/local/standin where a test
// needs one. It checks the shapes of the requests hookinbox makes.
type StripeMock struct {
	// URL is its base URL, such as http://127.0.0.1:41237.
	URL string

	proc *child
}

// startStripeMock builds stripe-mock from the version pinned in go.mod
// (once, into the user cache directory) and starts it on a free 127.0.0.1
// port, returning once it answers HTTP. ctx bounds the start only.
func startStripeMock(ctx context.Context, opts Options) (*StripeMock, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 3*time.Minute) // the first build
		defer cancel()
	}
	bin, err := toolBinary(ctx, opts.Root, stripeMockModule, stripeMockPackage)
	if err != nil {
		return nil, fmt.Errorf("start stripe-mock: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("start stripe-mock: %w", err)
	}
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:"+strconv.Itoa(port))
	proc, err := startChild(cmd, opts.Stdout, opts.Stderr)
	if err != nil {
		return nil, fmt.Errorf("start stripe-mock: %w", err)
	}
	m := &StripeMock{URL: fmt.Sprintf("http://127.0.0.1:%d", port), proc: proc}
	if err := waitHTTP(ctx, m.URL, proc); err != nil {
		_ = m.Stop()
		return nil, fmt.Errorf("start stripe-mock: %w", err)
	}
	return m, nil
}

// Stop stops stripe-mock and waits for it to exit. It is idempotent.
func (m *StripeMock) Stop() error {
	if m == nil || m.proc == nil {
		return nil
	}
	if err := m.proc.stop(3 * time.Second); err != nil {
		return fmt.Errorf("stop stripe-mock: %w", err)
	}
	return nil
}
