package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider/sample"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := devstack.StopShared(); err != nil {
		code = 1
	}
	if err := devstack.StopSharedMoto(); err != nil {
		code = 1
	}
	os.Exit(code)
}

// emulatorsInEnv returns the emulators shared by the test binary, with
// their endpoints, region and credentials in the test's environment as a
// shell that exported them has them: the command under test finds them
// there, as chaos does (it then starts no emulators of its own).
func emulatorsInEnv(t *testing.T) *devstack.Emulators {
	t.Helper()
	emu := devstacktest.ForTest(t)
	for k, v := range emu.EnvMap() {
		t.Setenv(k, v)
	}
	return emu
}

// stackInEnv is emulatorsInEnv with a fresh stack on them.
func stackInEnv(t *testing.T) (*devstack.Emulators, *devstack.Stack) {
	t.Helper()
	return emulatorsInEnv(t), devstacktest.NewTestStack(t)
}

// freeAddr returns a 127.0.0.1 address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestRunExitCodes(t *testing.T) {
	checkCommandLines(t, Options{}, []commandLine{
		{nil, 2, "", "Usage: hookinbox <command>"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"--help"}, 0, "Commands:", ""},
		{[]string{"help"}, 0, "Commands:", ""},
		{[]string{"help", "send"}, 0, "Usage: hookinbox send", ""},
		{[]string{"help", "send", "inspect"}, 2, "", "help takes one command name"},
		{[]string{"help", "frobnicate"}, 2, "", `unknown command "frobnicate"`},
	})
}

// commandLine is a command line and what it should do: its exit status,
// and text its stdout and its stderr hold.
type commandLine struct {
	args             []string
	want             int
	wantOut, wantErr string
}

// checkCommandLines runs each of lines as Run does with o.
func checkCommandLines(t *testing.T, o Options, lines []commandLine) {
	t.Helper()
	for _, tt := range lines {
		var stdout, stderr bytes.Buffer
		got := Run(context.Background(), o, tt.args, &stdout, &stderr)
		if got != tt.want || !strings.Contains(stdout.String(), tt.wantOut) || !strings.Contains(stderr.String(), tt.wantErr) {
			t.Errorf("hookinbox %q: exit %d\nstdout: %s\nstderr: %s\nwant %d, %q and %q", tt.args, got, &stdout, &stderr, tt.want, tt.wantOut, tt.wantErr)
		}
	}
}

func TestParseFlagsInterspersed(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantArgs  []string
		wantTimes int
	}{
		{"flags first", []string{"--times", "3", "stripe", "x.y"}, []string{"stripe", "x.y"}, 3},
		{"flags last", []string{"stripe", "x.y", "--times", "3"}, []string{"stripe", "x.y"}, 3},
		{"flags between", []string{"stripe", "--times=2", "x.y"}, []string{"stripe", "x.y"}, 2},
		{"double dash", []string{"stripe", "--", "--times"}, []string{"stripe", "--times"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			times := fs.Int("times", 1, "")
			got, err := parseFlags(fs, tt.args, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantArgs, got); diff != "" {
				t.Errorf("positional (-want +got):\n%s", diff)
			}
			if *times != tt.wantTimes {
				t.Errorf("times = %d, want %d", *times, tt.wantTimes)
			}
		})
	}
}

// run runs args as Run does, with hookinbox's commands and providers
// alone.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Run(ctx, Options{}, args, stdout, stderr)
}

// testApp is the CLI with hookinbox's commands and providers alone.
func testApp() *app {
	a, err := newApp(Options{})
	if err != nil {
		panic(err) // hookinbox's own names twice
	}
	return a
}

// TestModuleCommands: a command of a module's own (Options.Commands) runs
// with its arguments, is listed by help after hookinbox's, and exits as
// hookinbox's do; a name hookinbox or the module uses already is refused.
func TestModuleCommands(t *testing.T) {
	var got []string
	stock := Command{Name: "stock", Summary: "count the warehouse's stock", Run: func(_ context.Context, args []string, stdout, _ io.Writer) error {
		got = args
		switch {
		case slices.Contains(args, "--help"):
			fmt.Fprintln(stdout, "Usage: hookinbox stock [sku]")
			return flag.ErrHelp
		case len(args) > 1:
			return Usagef("stock takes one sku, got %q", args)
		}
		fmt.Fprintln(stdout, "12 in stock")
		return nil
	}}
	o := Options{Commands: []Command{stock}}
	checkCommandLines(t, o, []commandLine{
		{[]string{"stock", "MUG-BLUE"}, 0, "12 in stock", ""},
		{[]string{"stock", "a", "b"}, 2, "", "hookinbox stock: stock takes one sku, got [\"a\" \"b\"]\nRun 'hookinbox stock --help' for usage."},
		{[]string{"stock", "--help"}, 0, "Usage: hookinbox stock", ""},
		{[]string{"help", "stock"}, 0, "Usage: hookinbox stock", ""},
		{[]string{"help"}, 0, "  load      load the receiver with signed deliveries beside a floor program; throughput, latency, ratios\n  stock     count the warehouse's stock\n  help ", ""},
	})
	if code := Run(context.Background(), o, []string{"stock", "-x"}, io.Discard, io.Discard); code != 0 || !slices.Equal(got, []string{"-x"}) {
		t.Errorf("stock -x: exit %d, its Run got %q; want 0 and every argument after its name", code, got)
	}
	for name, o := range map[string]Options{
		"hookinbox's":     {Commands: []Command{{Name: "send", Run: stock.Run}}},
		"help":            {Commands: []Command{{Name: "help", Run: stock.Run}}},
		"twice":           {Commands: []Command{stock, stock}},
		"without a name":  {Commands: []Command{{Run: stock.Run}}},
		"without a Run":   {Commands: []Command{{Name: "stock"}}},
		"a provider name": {Providers: []sample.Sender{{Provider: stripe.Provider{}}}},
	} {
		var stderr bytes.Buffer
		if code := Run(context.Background(), o, []string{"help"}, io.Discard, &stderr); code != 2 || !strings.HasPrefix(stderr.String(), "hookinbox: ") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and why", name, code, &stderr)
		}
	}
}
