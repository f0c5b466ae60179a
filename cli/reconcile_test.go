package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/reconcile"
)

func TestReconcileCommandLine(t *testing.T) {
	checkCommandLines(t, Options{}, []commandLine{
		{[]string{"reconcile", "--help"}, 0, "Usage: hookinbox reconcile [--json] [--state-file FILE]", ""},
		{[]string{"reconcile", "now"}, 2, "", `reconcile takes no arguments, got ["now"]`},
		{[]string{"reconcile", "--nope"}, 2, "", "flag provided but not defined: -nope"},
		{[]string{"reconcile", "--state-file", "/nonexistent/hookinbox.json"}, 1, "", "no running local stack"},
	})
}

// TestReconcileAsksTheRunningDev: reconcile has the running dev (here a
// stand-in for it) run its reconciler once and prints the run's summary,
// as JSON with --json; a failed run is an error with its reason.
func TestReconcileAsksTheRunningDev(t *testing.T) {
	failing := false
	dev := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != reconcilePath {
			http.NotFound(w, r)
			return
		}
		if failing {
			http.Error(w, "stripe: 503", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(reconcile.Summary{Stuck: 2, Reenqueued: 1, Providers: []reconcile.ProviderRun{{Provider: "gopay", Listed: 3}}})
	}))
	defer dev.Close()
	path := filepath.Join(t.TempDir(), "state.json")
	if err := writeState(path, &devState{PID: os.Getpid(), BaseURL: dev.URL}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := cmdReconcile(context.Background(), []string{"--state-file", path}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stuck claims  2, re-enqueued 1", "gopay         listed 3, missed 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("reconcile printed:\n%s\nwant %q in it", &out, want)
		}
	}
	out.Reset()
	if err := cmdReconcile(context.Background(), []string{"--json", "--state-file", path}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var sum reconcile.Summary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil || sum.Stuck != 2 {
		t.Errorf("reconcile --json printed %s (%v)", &out, err)
	}
	failing = true
	if err := cmdReconcile(context.Background(), []string{"--state-file", path}, &out, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "the reconciler failed: stripe: 503") {
		t.Errorf("a failed run: %v, want its reason", err)
	}
}
