// Package cli is the hookinbox command: it runs hookinbox locally and
// talks to a running stack (`hookinbox help` lists the commands,
// `hookinbox <command> --help` shows each one's flags). A module's own
// main runs Main with what it adds: its providers, which send, dev, load
// and chaos then speak beside hookinbox's, and commands of its own, which
// find the running local stack with LocalStack:
//
//	func main() {
//		cli.Main(cli.Options{
//			Providers: []sample.Sender{warehouse.Sender()},
//			Commands:  []cli.Command{{Name: "stock", Summary: "...", Run: stock}},
//		})
//	}
//
// `hookinbox dev` writes a state file with its endpoints and resource
// names, so the other commands find the running stack without flags;
// inspect, replay, status, console, erase and export take --stack NAME
// for a deployed stack. Exit status is 2 for a usage error, 3 when erase
// or export finds nothing about the person, 1 for any other failure.
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

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
)

// Options are what a module's own hookinbox command adds to hookinbox's
// (Main, Run).
type Options struct {
	// Providers are the module's own providers, with how tools send
	// their deliveries: send, dev, load and chaos speak them beside
	// hookinbox's.
	Providers []sample.Sender
	// Commands are commands of the module's own; help lists them after
	// hookinbox's.
	Commands []Command
}

// Command is one command of the CLI: hookinbox's own, or one a module
// adds (Options.Commands).
type Command struct {
	Name    string // what follows hookinbox on the command line
	Summary string // its line in hookinbox help
	// Run runs it with the arguments after its name. An error wrapping
	// flag.ErrHelp (its --help) exits 0, one Usagef made 2, and any other
	// 1, printed after "hookinbox <name>: ".
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// app is one CLI: the providers its commands speak, how each one's
// deliveries are sent, and its commands.
type app struct {
	reg      *provider.Registry
	senders  map[string]sample.Sender // how send, load and chaos sign each provider's deliveries, by its name
	commands []Command
}

// newApp returns hookinbox's CLI with o's providers and commands. It
// refuses a provider or a command named twice.
func newApp(o Options) (*app, error) {
	reg, err := builtin.Registry(providersOf(o.Providers)...)
	if err != nil {
		return nil, err
	}
	a := &app{reg: reg, senders: pipeline.Senders(o.Providers...)}
	builtins := a.builtins()
	help := builtins[len(builtins)-1]
	a.commands = builtins[:len(builtins)-1]
	for _, c := range o.Commands {
		if c.Name == "" || c.Run == nil || a.command(c.Name) != nil || c.Name == help.Name {
			return nil, fmt.Errorf("command %q: a command needs a name of its own and a Run", c.Name)
		}
		a.commands = append(a.commands, c)
	}
	a.commands = append(a.commands, help)
	return a, nil
}

// builtins are hookinbox's commands, in the order help shows them, help
// last.
func (a *app) builtins() []Command {
	return []Command{
		{"dev", "run the local stack in the foreground (emulators, functions, HTTP API)", a.cmdDev},
		{"send", "send a signed webhook delivery to the stack", a.cmdSend},
		{"inspect", "show an event's inbox item and effect ledger", a.cmdInspect},
		{"replay", "replay events from the DLQ or the inbox", a.cmdReplay},
		{"erase", "erase what hookinbox keeps about a person (a customer id or an email)", cmdErase},
		{"export", "list what hookinbox holds about a person, for a data request", cmdExport},
		{"status", "one screen for the operator: queues, DLQ, stuck claims, reconciler, last hour's counts", a.cmdStatus},
		{"console", "the inbox in a browser, on this machine: events, replay as a button, parked, health, personal data", a.cmdConsole},
		{"reconcile", "run the reconciler once, now, against the local stack's API stand-ins", cmdReconcile},
		{"chaos", "deliver a corpus twice, shuffled, and compare with one clean delivery", a.cmdChaos},
		{"template", "write your stack's template: hookinbox's with your business file put in", cmdTemplate},
		{"sink", "receive a destination's deliveries: verify each signature and print it", cmdSink},
		{"load", "load the receiver with signed deliveries beside a floor program; throughput, latency, ratios", a.cmdLoad},
		{"help", "show help for a command", a.cmdHelp},
	}
}

// command returns the command name, or nil.
func (a *app) command(name string) *Command {
	for i := range a.commands {
		if a.commands[i].Name == name {
			return &a.commands[i]
		}
	}
	return nil
}

// providers is the registry send, dev and chaos speak: hookinbox's and
// the module's (Options.Providers).
func (a *app) providers() *provider.Registry { return a.reg }

// providersOf returns the providers of ss.
func providersOf(ss []sample.Sender) []provider.Provider {
	ps := make([]provider.Provider, 0, len(ss))
	for _, s := range ss {
		ps = append(ps, s.Provider)
	}
	return ps
}

// firstProvider is the provider dev's banner, --secret and webhook URL
// are about: the registry's first.
func (a *app) firstProvider() provider.Provider { return a.reg.All()[0] }

// usageError is a mistake in the command line; Run exits 2 for it.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// Usagef returns a usage error, a mistake in the command line: Run
// prints it with a pointer to the command's --help and exits 2.
func Usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// usagef is Usagef.
func usagef(format string, args ...any) error { return Usagef(format, args...) }

// Main runs the command line in os.Args with hookinbox's commands and
// providers and o's, and exits with Run's status. It does not return.
func Main(o Options) {
	os.Exit(Run(signalContext(), o, os.Args[1:], os.Stdout, os.Stderr))
}

// Run runs the command line args (the program name left out) with
// hookinbox's commands and providers and o's, and returns the exit
// status: 0, 1 for a failure, 2 for a usage error (o naming a provider or
// a command twice too), 3 when erase or export finds no one.
func Run(ctx context.Context, o Options, args []string, stdout, stderr io.Writer) int {
	a, err := newApp(o)
	if err != nil {
		fmt.Fprintln(stderr, "hookinbox:", err)
		return 2
	}
	return a.run(ctx, args, stdout, stderr)
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
func (a *app) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		a.printUsage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		a.printUsage(stdout)
		return 0
	}
	c := a.command(name)
	if c == nil {
		fmt.Fprintf(stderr, "hookinbox: unknown command %q\n\n", name)
		a.printUsage(stderr)
		return 2
	}
	return exitCode(c.Run(ctx, args[1:], stdout, stderr), name, stderr)
}

// exitCode returns the exit status of the command name's err, printing
// err.
func exitCode(err error, name string, stderr io.Writer) int {
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

func (a *app) printUsage(w io.Writer) {
	fmt.Fprintln(w, "hookinbox runs the webhook inbox locally and talks to a running local stack.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: hookinbox <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range a.commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'hookinbox <command> --help' for a command's flags.")
	fmt.Fprintln(w, "Start with: hookinbox dev   (in one terminal), then")
	fmt.Fprintln(w, "            hookinbox send stripe checkout.session.completed --times 3")
}

func (a *app) cmdHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		a.printUsage(stdout)
		return nil
	}
	if len(args) > 1 {
		return usagef("help takes one command name")
	}
	if c := a.command(args[0]); c != nil && c.Name != "help" {
		return c.Run(ctx, []string{"--help"}, stdout, stderr)
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
