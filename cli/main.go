// Package cli is the hookinbox command: it runs hookinbox locally and
// talks to a running stack. cmd/hookinbox's main is Main(); a team whose
// module adds providers of its own runs its own main, Main(its providers),
// so send, dev and chaos know them too:
//
//	func main() { cli.Main(warehouse.Provider{}) }
//
// The commands:
//
//	hookinbox dev                                        the local stack, in the foreground
//	hookinbox send stripe checkout.session.completed     a signed Stripe delivery
//	hookinbox inspect stripe#evt_123                     an inbox item and its effect ledger
//	hookinbox state                                      the example shop's state
//	hookinbox replay ...                                 replay parked or finished events
//	hookinbox status [--json] [--stack NAME]             queues, DLQ, stuck claims, reconciler, counts
//	hookinbox console [--stack NAME] [--read-only]       the inbox in a browser, replay as a button
//	hookinbox reconcile [--json]                         run the reconciler once against the local stack
//	hookinbox chaos --events events.jsonl                the duplicate-proof test
//	hookinbox template --business business.yaml          your stack's template
//	hookinbox sink --secret whsec_...                    receive and verify a destination's deliveries
//
// `hookinbox dev` writes a state file with its endpoints and resource names,
// so the other subcommands find the running stack without flags; inspect,
// replay and status take --stack NAME for a deployed stack. Exit status
// is 2 for a usage error, 3 when erase or export finds nothing about the
// person, 1 for any other failure.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hookinbox/hookinbox/provider/builtin"
	"github.com/hookinbox/hookinbox/provider/sample"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order help shows them. It is set
// in init because help refers to it.
var commands []command

func init() {
	commands = []command{
		{"dev", "run the local stack in the foreground (emulators, functions, HTTP API)", cmdDev},
		{"send", "send a signed webhook delivery to the stack", cmdSend},
		{"inspect", "show an event's inbox item and effect ledger", cmdInspect},
		{"state", "show the example shop's state (entitlements, emails, invoices)", cmdState},
		{"replay", "replay events from the DLQ or the inbox", cmdReplay},
		{"erase", "erase what hookinbox keeps about a person (a customer id or an email)", cmdErase},
		{"export", "list what hookinbox holds about a person, for a data request", cmdExport},
		{"status", "one screen for the operator: queues, DLQ, stuck claims, reconciler, last hour's counts", cmdStatus},
		{"console", "the inbox in a browser, on this machine: events, replay as a button, parked, health, personal data", cmdConsole},
		{"reconcile", "run the reconciler once, now, against the local stack's API stand-ins", cmdReconcile},
		{"chaos", "deliver a corpus twice, shuffled, and compare with one clean delivery", cmdChaos},
		{"template", "write your stack's template: hookinbox's with your business file put in", cmdTemplate},
		{"sink", "receive a destination's deliveries: verify each signature and print it", cmdSink},
		{"load", "load the receiver with signed deliveries beside a floor program; throughput, latency, ratios", cmdLoad},
		{"help", "show help for a command", cmdHelp},
	}
}

// usageError is a mistake in the command line; main exits 2 for it.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// Main runs the command line in os.Args and exits: hookinbox's providers
// and those of extra, a team's own senders, are those send, dev and chaos
// speak. It does not return.
func Main(extra ...sample.Sender) {
	if _, err := builtin.Registry(providersOf(extra)...); err != nil {
		fmt.Fprintln(os.Stderr, "hookinbox:", err) // a name given twice
		os.Exit(2)
	}
	teamSenders = extra
	os.Exit(run(signalContext(), os.Args[1:], os.Stdout, os.Stderr))
}

// signalContext returns a context cancelled by the first SIGINT, SIGTERM or
// SIGHUP, so commands stop cleanly. A signal more than a second later (a
// second Ctrl-C) exits at once; one sooner is taken for the same signal
// delivered twice (by make, timeout or a terminal) and ignored.
func signalContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-sigs
		first := time.Now()
		cancel()
		for s := range sigs {
			if time.Since(first) > time.Second {
				fmt.Fprintf(os.Stderr, "hookinbox: %v again: exiting without cleaning up\n", s)
				os.Exit(130)
			}
		}
	}()
	return ctx
}

// run dispatches args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		printUsage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		var ue *usageError
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errNoOneFound):
			return 3 // the command said so
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "hookinbox %s: %v\nRun 'hookinbox %s --help' for usage.\n", name, err, name)
			return 2
		default:
			fmt.Fprintf(stderr, "hookinbox %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "hookinbox: unknown command %q\n\n", name)
	printUsage(stderr)
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "hookinbox runs the webhook inbox locally and talks to a running local stack.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: hookinbox <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'hookinbox <command> --help' for a command's flags.")
	fmt.Fprintln(w, "Start with: hookinbox dev   (in one terminal), then")
	fmt.Fprintln(w, "            hookinbox send stripe checkout.session.completed --times 3")
}

func cmdHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stdout)
		return nil
	}
	if len(args) > 1 {
		return usagef("help takes one command name")
	}
	for _, c := range commands {
		if c.name == args[0] && c.name != "help" {
			return c.run(ctx, []string{"--help"}, stdout, stderr)
		}
	}
	return usagef("unknown command %q", args[0])
}

// newFlagSet returns a flag set that reports errors instead of exiting.
// Its usage starts with the synopsis and the text about the command.
func newFlagSet(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("hookinbox "+name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: hookinbox %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(about))
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args with fs, allowing flags after the positional
// arguments too ("send stripe checkout.session.completed --times 3"); "--"
// ends the flags. It returns the positional arguments. -h or --help prints
// the usage on stdout and returns flag.ErrHelp; any other flag error is a
// usage error.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.Usage()
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// fs.Parse stops at the first non-flag, or after "--".
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
