package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/sink"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

const defaultSinkAddr = "127.0.0.1:4100"

type sinkFlags struct {
	addr      string
	secret    string
	status    int
	failFirst int
	delay     time.Duration
	body      bool
}

// parseSink parses sink's command line.
func parseSink(args []string, stdout io.Writer) (sinkFlags, error) {
	var f sinkFlags
	fs := newFlagSet("sink", "[--secret whsec_...] [flags]", `
A small HTTP receiver for trying a destination out. It verifies each
delivery's Standard Webhooks signature (webhook-id, webhook-timestamp,
webhook-signature) with --secret, as your endpoint should, and prints one
line per delivery: the answer, the webhook-id, the event's provider, type
and key, and whether this webhook-id came before (a redelivery). A bad
signature is answered 401 and the line says why.

Without --secret it makes a fresh whsec_ secret and prints it: give that
secret to the destination (hookinbox dev --forward URL --forward-secret
SECRET). --status, --fail-first and --delay make it a failing or slow
endpoint, to watch hookinbox retry and park:

  hookinbox sink --status 503 --fail-first 2    two 503s per event, then 200
  hookinbox sink --status 410                   "gone": parked at once
  hookinbox sink --delay 2s                     a slow endpoint`)
	fs.StringVar(&f.addr, "addr", defaultSinkAddr, "address to listen on")
	fs.StringVar(&f.secret, "secret", "", "whsec_ signing secret(s), comma-separated while rotating (default: a fresh one, printed)")
	fs.IntVar(&f.status, "status", http.StatusOK, "answer verified deliveries with this status")
	fs.IntVar(&f.failFirst, "fail-first", 0, "with --status: answer it to the first N attempts of each webhook-id only, then 200")
	fs.DurationVar(&f.delay, "delay", 0, "wait this long before answering a verified delivery")
	fs.BoolVar(&f.body, "body", false, "print each verified delivery's body too")
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return f, err
	}
	switch {
	case len(rest) > 0:
		return f, usagef("sink takes no arguments, got %q", rest)
	case f.status < 200 || f.status > 599:
		return f, usagef("--status %d is not an HTTP status", f.status)
	case f.failFirst < 0:
		return f, usagef("--fail-first must not be negative")
	case f.delay < 0:
		return f, usagef("--delay must not be negative")
	}
	return f, nil
}

func cmdSink(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseSink(args, stdout)
	if err != nil {
		return err
	}
	secret := f.secret
	if secret == "" {
		secret = sink.NewSecret()
	}
	p := &sinkPrinter{w: stdout, body: f.body}
	s, err := sink.New(sink.Options{Secrets: envconfig.Split(secret), Status: f.status, FailFirst: f.failFirst, Delay: f.delay, OnDelivery: p.print})
	if err != nil {
		return usagef("--secret: %v", err)
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (pass --addr 127.0.0.1:4200 to use another port)", f.addr, err)
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stdout, "hookinbox sink: listening on %s\n", url)
	if f.secret == "" {
		fmt.Fprintf(stdout, "  secret %s   (fresh; pass --secret to keep it)\n", secret)
	}
	fmt.Fprintf(stdout, "  send it events: %s dev --forward %s --forward-secret %s\n", selfCommand(), url, secret)
	return serveSink(ctx, ln, s, f.delay)
}

// serveSink serves s on ln until ctx ends, then lets the deliveries in
// flight, each delayed by delay, finish.
func serveSink(ctx context.Context, ln net.Listener, s http.Handler, delay time.Duration) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second+delay)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// sinkPrinter prints one line per delivery.
type sinkPrinter struct {
	mu   sync.Mutex
	w    io.Writer
	body bool
}

func (p *sinkPrinter) print(d sink.Delivery) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := d.At.Format("15:04:05")
	if d.Err != nil {
		fmt.Fprintf(p.w, "%s %d refused: %v\n", at, d.Status, d.Err)
		return
	}
	seen := "first delivery"
	if d.Redelivery() {
		seen = fmt.Sprintf("redelivery (attempt %d)", d.Attempt)
	}
	fmt.Fprintf(p.w, "%s %d webhook-id=%s provider=%s type=%s key=%s %s\n", at, d.Status, d.ID, d.Body.Provider, d.Body.Type, d.Body.Key, seen)
	if p.body {
		fmt.Fprintf(p.w, "  %s\n", d.Raw)
	}
}
