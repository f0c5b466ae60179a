package cli

import (
	"bytes"
	"context"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
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
	tests := []struct {
		name       string
		args       []string
		want       int
		wantStdout string
		wantStderr string
	}{
		{"no command", nil, 2, "", "Usage: hookinbox <command>"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"top-level help", []string{"--help"}, 0, "Commands:", ""},
		{"help command", []string{"help"}, 0, "Commands:", ""},
		{"help for send", []string{"help", "send"}, 0, "Usage: hookinbox send", ""},
		{"send --help", []string{"send", "--help"}, 0, "-times int", ""},
		{"dev -h", []string{"dev", "-h"}, 0, "-rie", ""},
		{"state --help", []string{"state", "--help"}, 0, "-json", ""},
		{"inspect --help", []string{"inspect", "--help"}, 0, "<provider>#<event id>", ""},
		{"bad flag", []string{"send", "--nope"}, 2, "", "flag provided but not defined: -nope"},
		{"send without event", []string{"send", "stripe"}, 2, "", "want a provider and an event type"},
		{"send unknown provider", []string{"send", "paypal", "push"}, 2, "", `unknown provider "paypal"`},
		{"send zero times", []string{"send", "stripe", "invoice.paid", "--times", "0"}, 2, "", "--times must be at least 1"},
		{"send bad type", []string{"send", "stripe", "Not An Event"}, 2, "", "neither a file nor a sample of stripe's"},
		{"inspect without key", []string{"inspect"}, 2, "", "want one event key"},
		{"inspect malformed key", []string{"inspect", "#evt_1"}, 2, "", "not <provider>#<event id>"},
		{"dev with an argument", []string{"dev", "now"}, 2, "", "dev takes no arguments"},
		{"dev with a bad --env", []string{"dev", "--env", "NOEQUALS"}, 2, "", "want KEY=VALUE"},
		{"state without a stack", []string{"state", "--state-file", "/nonexistent/hookinbox.json"}, 1, "", "no running local stack"},
		{"inspect without a stack", []string{"inspect", "stripe#evt_1", "--state-file", "/nonexistent/hookinbox.json"}, 1, "", "start one with `make dev`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(context.Background(), tt.args, &stdout, &stderr)
			if got != tt.want {
				t.Errorf("run(%q) = %d, want %d\nstdout: %s\nstderr: %s", tt.args, got, tt.want, &stdout, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout = %q, want it to contain %q", &stdout, tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", &stderr, tt.wantStderr)
			}
		})
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

func TestDevBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"dev", "--addr", l.Addr().String(), "--state-file", filepath.Join(t.TempDir(), "state.json")}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "pass --addr 127.0.0.1:4000") {
		t.Errorf("dev on a busy port: exit %d, stderr %q; want 1 and advice to pick another port", code, &stderr)
	}
}
