package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/cli"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/shop"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := devstack.StopShared(); err != nil {
		code = 1
	}
	os.Exit(code)
}

func TestStateCommandLine(t *testing.T) {
	for _, tt := range []struct {
		name       string
		args       []string
		want       int
		wantStdout string
		wantStderr string
	}{
		{"help", []string{"state", "--help"}, 0, "-json", ""},
		{"help command", []string{"help", "state"}, 0, "Usage: hookinbox state [--json]", ""},
		{"listed", []string{"help"}, 0, "  state     show the example shop's state", ""},
		{"an argument", []string{"state", "now"}, 2, "", `state takes no arguments, got ["now"]`},
		{"a bad flag", []string{"state", "--nope"}, 2, "", "flag provided but not defined: -nope"},
		{"no stack", []string{"state", "--state-file", "/nonexistent/hookinbox.json"}, 1, "", "no running local stack"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := cli.Run(context.Background(), options(), tt.args, &stdout, &stderr); got != tt.want {
				t.Errorf("hookinbox %q: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, got, tt.want, &stdout, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("hookinbox %q:\nstdout: %s\nstderr: %s\nwant %q and %q in them", tt.args, &stdout, &stderr, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}

// TestStateReadsTheShopsTable: state reads the shop's table of a stack on
// the local emulators, as text and as JSON.
func TestStateReadsTheShopsTable(t *testing.T) {
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	env := emu.EnvMap()
	cfg, err := devstack.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	stack := cli.Stack{Name: st.Name, Tables: st.Tables, AWS: cfg}
	var out bytes.Buffer
	if err := printState(context.Background(), stack, false, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Shop state (table " + st.Tables["ShopTable"] + ")", "Access: 0", "Nothing yet."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("state printed:\n%s\nwant %q in it", &out, want)
		}
	}
	out.Reset()
	if err := printState(context.Background(), stack, true, &out); err != nil {
		t.Fatal(err)
	}
	var state shop.State
	if err := json.Unmarshal(out.Bytes(), &state); err != nil {
		t.Errorf("state --json printed %q: %v", &out, err)
	}
	delete(stack.Tables, "ShopTable")
	if err := printState(context.Background(), stack, false, &out); err == nil || !strings.Contains(err.Error(), "no ShopTable") {
		t.Errorf("state of a stack without the shop: %v, want no ShopTable", err)
	}
}
