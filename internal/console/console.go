package console

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Config says where the console runs and what it shows.
type Config struct {
	// Addr is the loopback host:port the console listens on: requests
	// must name it (or localhost with its port) as their Host.
	Addr string
	// Where names the stack for a person: "local stack hookinbox".
	Where string
	// StackArgs are the flags that choose the stack in a CLI line the
	// console shows: "", " --state-file F", " --stack S".
	StackArgs string
	// ReadOnly serves no action: the routes that change the stack do
	// not exist.
	ReadOnly bool
	// Providers are the provider names the events filter offers.
	Providers []string
	// By names who erases, in the audit record: "console:<user>".
	By string
	// Token is the per-run secret in the path of every URL; the cookie
	// holds another derived from it. New makes a random one when it is
	// empty.
	Token string
	// Log receives the errors a page shows as "could not read"; nil
	// discards them.
	Log io.Writer
}

// Event is one event as `hookinbox inspect` reads it.
type Event struct {
	Item         inbox.Item
	Effects      []effects.Record
	OpenIntents  []ledger.Intent
	Destinations []destination.Attempts
	// Payload is the stored payload; nil when it was removed or not found.
	Payload []byte
}

// Span is the time a chart or a count covers: Buckets of Step from From.
type Span struct {
	From    time.Time
	Step    time.Duration
	Buckets int
}

// MetricQuery is one of hookinbox's metrics (internal/platform/metrics)
// over a Span: its Stat ("Sum", "Average", "Maximum" or "p99") per
// bucket, over the datapoints with Dims (none: the metric as the alarms
// watch it).
type MetricQuery struct {
	Name string
	Stat string
	Dims map[string]string
}

// Health is what `hookinbox status` shows, and the alarms in ALARM.
type Health struct {
	Source, Stack     string
	At                time.Time
	EventsQueue, DLQ  QueueDepth
	OldestUnfinished  string // "<key> (<status>), last message <age> ago"; "" when none
	StuckAfter        string
	StuckClaims       int
	OverdueLeases     int
	Reconciler        []string // one line per provider's checkpoint
	Window            string
	Counts            []Count
	CountsFrom        string
	Alarms            []string // names of the alarms in ALARM; nil locally
	AlarmsUnavailable string   // why alarms are not shown, when they are not
	Problems          []string
}

// QueueDepth is one queue's approximate message counts.
type QueueDepth struct {
	Name                       string
	Visible, InFlight, Delayed int
	OldestAge                  string // AWS only: the age of its oldest message
}

// Count is one metric's sum over a window.
type Count struct {
	Name  string
	Value float64
}

// DeadLetters is the DLQ as the console reads it (*queue.Queue):
// messages received, and made visible again at once.
type DeadLetters interface {
	Receive(ctx context.Context, max int, visibility, wait time.Duration) ([]queue.Message, error)
	Release(ctx context.Context, receiptHandle string) error
	Depth(ctx context.Context) (queue.Depth, error)
}

// stack is what the console reads and changes: the CLI wires it from its
// own commands' code (cli/console.go), each with that command's
// allow-list of AWS calls.
type stack interface {
	// Recent lists the latest events (inbox.DynamoDB.Recent).
	Recent(ctx context.Context, q inbox.RecentQuery) ([]inbox.Item, bool, error)
	// Find returns the key of <provider>#<event id>, or of a bare event
	// id found under one provider, as inspect and replay take them.
	Find(ctx context.Context, s string) (webhook.Key, error)
	// Get returns an event's status item.
	Get(ctx context.Context, key webhook.Key) (inbox.Item, error)
	// Event reads an event as inspect does, with its payload.
	Event(ctx context.Context, key webhook.Key) (Event, error)
	// DeliveryLog returns an event's delivery attempts, by destination.
	DeliveryLog(ctx context.Context, key webhook.Key) ([]destination.Attempts, error)
	// SubjectHashes returns the hashes a subject's events are indexed
	// under, as erase computes them; SubjectEvents up to limit of those
	// events.
	SubjectHashes(ctx context.Context, s provider.Subject) ([]string, error)
	SubjectEvents(ctx context.Context, hashes []string, limit int) ([]webhook.Key, error)
	// DLQ is the events DLQ, for reading.
	DLQ() DeadLetters
	// Replay runs a replay as `hookinbox replay` does, telling progress
	// each line; a dry run only reads.
	Replay(ctx context.Context, req replay.Request, progress func(replay.Line)) (replay.Summary, error)
	// Health is what `hookinbox status` reads.
	Health(ctx context.Context) (Health, error)
	// Metrics returns each query's values per bucket of span.
	Metrics(ctx context.Context, span Span, qs []MetricQuery) ([][]float64, error)
	// Destinations names the destinations the stack delivers to.
	Destinations(ctx context.Context) ([]string, error)
	// Export and Erase are `hookinbox export` and `erase`; Erasures the
	// audit records of past erasures.
	Export(ctx context.Context, subjects []provider.Subject) (privacy.Report, error)
	Erase(ctx context.Context, req privacy.Request) (privacy.Report, error)
	Erasures(ctx context.Context) ([]inbox.Erasure, error)
}

// Server is the console's web app.
type Server struct {
	cfg     Config
	stack   stack
	hosts   map[string]bool // the Host values a request may name
	cookie  string          // the cookie's value, derived from the token
	csrf    string
	handler http.Handler
	pages   pages
	plans   *plans
	jobs    *jobs
	dlq     *dlqCache
	now     func() time.Time

	// actions is held by the change running and by the console's own
	// reads of the DLQ, which would hide messages from a replay.
	actions sync.Mutex
}

// New returns the console of stack s, or an error if cfg.Addr is not a
// loopback address.
func New(cfg Config, s stack) (*Server, error) {
	hosts, err := loopbackHosts(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if cfg.Token == "" {
		cfg.Token = randomID()
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	pg, err := parsePages()
	if err != nil {
		return nil, err
	}
	srv := &Server{cfg: cfg, stack: s, hosts: hosts, cookie: derive(cfg.Token, "cookie"), csrf: derive(cfg.Token, "csrf"), pages: pg,
		plans: newPlans(cfg.Token), jobs: &jobs{}, dlq: &dlqCache{}, now: time.Now}
	srv.handler = srv.guard(http.StripPrefix("/"+cfg.Token, srv.routes()))
	return srv, nil
}

// URL returns the address to open: every page of the console is below
// it, and opening it signs the browser in.
func (s *Server) URL() string { return "http://" + s.cfg.Addr + "/" + s.cfg.Token + "/" }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// routes returns the console's routes, below the token's path: each
// page is one level down, so that the pages' relative links work from
// every page. In read-only mode, none that changes the stack, or leads
// to a change, exists.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, f := range []string{"static/console.css", "static/console.js"} {
		mux.HandleFunc("GET /"+f, func(w http.ResponseWriter, r *http.Request) { http.ServeFileFS(w, r, staticFiles, f) })
	}
	mux.HandleFunc("GET /events", s.eventsPage)
	mux.HandleFunc("POST /subject", s.subjectSearch)
	mux.HandleFunc("GET /event", s.eventPage)
	mux.HandleFunc("GET /parked", s.parkedPage)
	mux.HandleFunc("GET /destinations", s.destinationsPage)
	mux.HandleFunc("GET /health", s.healthPage)
	mux.HandleFunc("GET /personal", s.personalPage)
	mux.HandleFunc("POST /export", s.exportLookup)
	if s.cfg.ReadOnly {
		return mux
	}
	mux.HandleFunc("POST /replay-dry-run", s.replayDryRun)
	mux.HandleFunc("POST /replay", s.replayConfirm)
	mux.HandleFunc("POST /erase-dry-run", s.eraseDryRun)
	mux.HandleFunc("POST /erase", s.eraseConfirm)
	mux.HandleFunc("GET /job", s.jobPage)
	return mux
}

// loopbackHosts returns the Host values a request to addr may carry, or
// an error if addr is not a loopback address with a port.
func loopbackHosts(addr string) (map[string]bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return nil, fmt.Errorf("console address %q: want a loopback host:port", addr)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("console address %q: not a loopback address (127.0.0.1 or ::1): the console serves this machine only", addr)
	}
	return map[string]bool{net.JoinHostPort(host, port): true, net.JoinHostPort("localhost", port): true}, nil
}

// randomID returns a random identifier of 128 bits.
func randomID() string { return strings.ToLower(rand.Text()) }

// errBusy: another change is running.
var errBusy = errors.New("another change is running: wait for it to finish (its page shows its progress)")
