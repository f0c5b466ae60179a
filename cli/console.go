package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/console"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// consoleHelp is the text of `hookinbox console --help`.
const consoleHelp = `
Serves the inbox in a browser, on this machine only, until Ctrl-C, and
prints the URL to open (it carries this run's token; keep it to
yourself). Pages: the events, the latest first, with filters and a search
by key or by subject; one event's timeline and payload, and its replay;
the DLQ by reason and type, and its replay; the destinations; what
status shows, with charts; personal data: export, erase and the audit
records of past erasures.

Every change is a dry run first, then a confirmation. It talks to the
stack inspect and replay talk to, with their allow-lists of AWS calls:
pages only read; dry runs read and peek at the DLQ; only a confirmed
replay or erasure writes. --read-only serves no change at all.
` + stackHelp + `

Examples:
  hookinbox console
  hookinbox console --stack shop-prod --read-only
  hookinbox console --addr 127.0.0.1:4400`

// consoleFlags are console's command line.
type consoleFlags struct {
	addr     string
	readOnly bool
	stack    *stackFlags
}

// parseConsole parses console's command line.
func parseConsole(args []string, stdout io.Writer) (consoleFlags, error) {
	var f consoleFlags
	fs := newFlagSet("console", "[--stack NAME | --state-file F] [--addr 127.0.0.1:0] [--read-only]", consoleHelp)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:0", "loopback `address` to serve on; port 0 picks a free one")
	fs.BoolVar(&f.readOnly, "read-only", false, "serve no change: no replay, no erasure, not even their dry runs")
	f.stack = addStackFlags(fs)
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return f, err
	}
	if len(rest) > 0 {
		return f, usagef("console takes no arguments, got %q", rest)
	}
	if host, _, err := net.SplitHostPort(f.addr); err != nil || net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback() {
		return f, usagef("--addr %q: want a loopback address and port, such as 127.0.0.1:0", f.addr)
	}
	return f, nil
}

func (a *app) cmdConsole(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseConsole(args, stdout)
	if err != nil {
		return err
	}
	st, where, err := newConsoleStack(ctx, f.stack, stderr, f.readOnly, a.providers().Names())
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.addr, err)
	}
	srv, err := console.New(console.Config{Addr: ln.Addr().String(), Where: where, StackArgs: st.base.args, ReadOnly: f.readOnly,
		Providers: st.providers, By: "console:" + orDefault(os.Getenv("USER"), "unknown"), Log: stderr}, st)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(stdout, "hookinbox console: open %s\n", srv.URL())
	return serveConsole(ctx, ln, srv)
}

// serveConsole serves srv on ln until ctx is done.
func serveConsole(ctx context.Context, ln net.Listener, srv http.Handler) error {
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// consoleStack is the console's stack: the code of inspect, replay,
// status, erase and export on the target they would talk to, each
// client limited as that command limits it.
type consoleStack struct {
	base *target // every call allowed (read-only: reads and peeks)
	// read serves the pages (inspect and status: readsOnly); peek reads
	// the DLQ and runs the dry run of a replay or an erasure
	// (readsAndPeeks); write runs a confirmed change (nil when read-only).
	read, peek, write *target
	stderr            io.Writer
	providers         []string // their names: a bare event id is looked up under each

	mu   sync.Mutex
	keys privacy.Keys // the subject keys, once read
}

// newConsoleStack resolves the stack the flags choose, and says which it
// is for a person.
func newConsoleStack(ctx context.Context, sf *stackFlags, stderr io.Writer, readOnly bool, providers []string) (*consoleStack, string, error) {
	var allowed func(string) bool
	if readOnly {
		allowed = readsAndPeeks
	}
	t, err := sf.resolve(ctx, "console", stderr, allowed, true)
	if err != nil {
		return nil, "", err
	}
	c := &consoleStack{base: t, read: t.limitedTo(readsOnly), peek: t.limitedTo(readsAndPeeks), stderr: stderr, providers: providers}
	if !readOnly {
		c.write = t
	}
	where := t.where() + " in " + orDefault(t.cfg.Region, "no region")
	if t.local != nil {
		where = "local stack " + t.stack
	}
	return c, where, nil
}

// Recent implements the console's stack.
func (c *consoleStack) Recent(ctx context.Context, q inbox.RecentQuery) ([]inbox.Item, bool, error) {
	return c.read.store().Recent(ctx, q)
}

// Find implements the console's stack with replay's and inspect's eventKey.
func (c *consoleStack) Find(ctx context.Context, s string) (webhook.Key, error) {
	if _, err := webhook.ParseKey(keyShape(s)); err != nil {
		return "", err
	}
	return eventKey(ctx, c.read.store(), s, c.providers)
}

// Get implements the console's stack.
func (c *consoleStack) Get(ctx context.Context, key webhook.Key) (inbox.Item, error) {
	return c.read.store().Get(ctx, key)
}

// Event implements the console's stack with inspect's inspectEvent.
func (c *consoleStack) Event(ctx context.Context, key webhook.Key) (console.Event, error) {
	return inspectEvent(ctx, c.read, key, true)
}

// DeliveryLog implements the console's stack.
func (c *consoleStack) DeliveryLog(ctx context.Context, key webhook.Key) ([]destination.Attempts, error) {
	return destination.NewLog(dynamodb.NewFromConfig(c.read.cfg), c.read.table, 0).Read(ctx, key)
}

// SubjectHashes implements the console's stack with erase's subject keys.
func (c *consoleStack) SubjectHashes(ctx context.Context, s provider.Subject) ([]string, error) {
	keys, err := c.subjectKeys(ctx)
	if err != nil {
		return nil, err
	}
	return privacy.NewHasher(keys).Lookup(ctx, []provider.Subject{s})
}

// subjectKeys reads the stack's subject keys the first time (as erase
// does), then remembers them.
func (c *consoleStack) subjectKeys(ctx context.Context) (privacy.Keys, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys != nil {
		return c.keys, nil
	}
	keys, err := (&subjectFlags{}).keys(ctx, c.read)
	if err == nil {
		c.keys = keys
	}
	return keys, err
}

// SubjectEvents implements the console's stack.
func (c *consoleStack) SubjectEvents(ctx context.Context, hashes []string, limit int) ([]webhook.Key, error) {
	var keys []webhook.Key
	cursor := ""
	for len(keys) < limit {
		page, next, err := c.read.store().SubjectEvents(ctx, hashes, cursor, limit-len(keys))
		if err != nil {
			return nil, err
		}
		keys = append(keys, page...)
		if next == "" {
			break
		}
		cursor = next
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// DLQ implements the console's stack: the DLQ, read as a dry-run replay
// reads it.
func (c *consoleStack) DLQ() console.DeadLetters {
	return queue.New(sqs.NewFromConfig(c.peek.cfg), c.peek.dlqURL)
}

// Replay implements the console's stack with replay's code: a dry run on
// the clients replay --dry-run has, a replay on replay's.
func (c *consoleStack) Replay(ctx context.Context, req replay.Request, progress func(replay.Line)) (replay.Summary, error) {
	t := c.write
	if req.DryRun {
		t = c.peek
	}
	if t == nil {
		return replay.Summary{}, errors.New("the console is read-only")
	}
	return t.replayer(replay.Config{Progress: progress}).Handle(ctx, req)
}

// Export implements the console's stack with export's code.
func (c *consoleStack) Export(ctx context.Context, subjects []provider.Subject) (privacy.Report, error) {
	e, err := (&subjectFlags{}).eraserOn(ctx, c.read, "console", c.stderr, false)
	if err != nil {
		return privacy.Report{}, err
	}
	return e.Export(ctx, subjects)
}

// Erase implements the console's stack with erase's code: a dry run on
// the clients erase --dry-run has.
func (c *consoleStack) Erase(ctx context.Context, req privacy.Request) (privacy.Report, error) {
	t := c.write
	if req.DryRun {
		t = c.peek
	}
	if t == nil {
		return privacy.Report{}, errors.New("the console is read-only")
	}
	e, err := (&subjectFlags{}).eraserOn(ctx, t, "console", c.stderr, true)
	if err != nil {
		return privacy.Report{}, err
	}
	return e.Erase(ctx, req)
}

// Erasures implements the console's stack.
func (c *consoleStack) Erasures(ctx context.Context) ([]inbox.Erasure, error) {
	return c.read.store().Erasures(ctx)
}
