package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/standin"
)

// ErrNoSample is wrapped by Sample's error when the provider has no
// payload of that name.
var ErrNoSample = errors.New("no such sample")

// Sample returns the sample payload name of p as p would send it now
// (sample.Sender.Sampled, with ev.Fresh): testdata/<provider>/<name, / as _>.json below
// the first of roots that has it (default the current directory), else
// in hookinbox's. A name without a file of its own takes the file of
// another about the same object (checkout.session.async_payment_succeeded:
// checkout.session.completed.json) when p's Sampler sends it under that
// type. ev carries the id, type, variant and options to send it with.
func Sample(s sample.Sender, name string, ev sample.Event, roots ...string) (sample.Event, error) {
	p := s.Provider
	if len(roots) == 0 {
		roots = []string{"."}
	}
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, filepath.Join(r, "testdata", p.Name()))
	}
	if root, err := devstack.RepoRoot(""); err == nil {
		dirs = append(dirs, filepath.Join(root, "testdata", p.Name()))
	}
	var names []string
	for _, dir := range dirs {
		path, found := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".json"), true
		if _, err := os.Stat(path); err != nil {
			path, names = sibling(dir, name, names)
			found = false
		}
		if path == "" {
			continue
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return ev, err
		}
		want := ev.Type
		if !found && want == "" {
			want = name
		}
		ev.Body, ev.File, ev.Type, ev.Fresh = body, filepath.Base(path), want, true
		out, err := s.Sampled(ev)
		if err == nil && !found && out.Type != want {
			err = fmt.Errorf("%s has no sample %s: %w", p.Name(), name, ErrNoSample)
		}
		return out, err
	}
	return ev, fmt.Errorf("%s has no sample %s (testdata/%s has %s): %w", p.Name(), name, p.Name(), strings.Join(names, ", "), ErrNoSample)
}

// sibling returns the path of the file in dir of another name about the
// same object as name (before its last '.'), or "", and names with the
// sample names dir has.
func sibling(dir, name string, names []string) (string, []string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	object := name[:max(strings.LastIndex(name, "."), 0)]
	found := ""
	for _, path := range paths {
		n := strings.Replace(strings.TrimSuffix(filepath.Base(path), ".json"), "_", "/", 1)
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
		if rest, ok := strings.CutPrefix(n, object+"."); ok && object != "" && found == "" && !strings.Contains(rest, ".") {
			found = path
		}
	}
	return found, names
}

// standin returns the stand-in serving the API of provider name.
func (s *Stack) standin(name string) http.Handler {
	switch name {
	case stripe.Name:
		return s.Stripe
	case gopay.Name:
		return s.GoPay
	case mollie.Name:
		return s.Mollie
	}
	return nil
}

// ParkExample returns the arguments of `hookinbox send` that park an
// event of provider name on the local stack with the example shop: a
// checkout whose invoice the Stripe stand-in refuses once
// (standin.RefusedOnce), so that its replay finishes it. False for a
// provider that has none.
func ParkExample(name string) (string, bool) {
	if name != stripe.Name {
		return "", false
	}
	return name + " checkout.session.completed --customer " + standin.RefusedOnce, true
}

// StandinURL returns the base URL of the stand-in of the id-only provider
// name among a running stack's endpoints, which takes a payment with
// PUT /_standin/payments/{id}; false when there is none.
func StandinURL(name string, endpoints map[string]string) (string, bool) {
	var u string
	switch name {
	case gopay.Name:
		u = strings.TrimSuffix(endpoints["GOPAY_API_URL"], "/api")
	case mollie.Name:
		u = endpoints["MOLLIE_API_URL"]
	}
	return u, u != ""
}

// apiStandinURL returns the base URL of the stand-in of provider name's
// API among a running stack's endpoints (StandinURL's, or Stripe's),
// which takes what the API serves with PUT (putPath).
func apiStandinURL(name string, endpoints map[string]string) (string, bool) {
	if name == stripe.Name {
		u := strings.TrimSuffix(endpoints["STRIPE_API_URL"], "/")
		return u, u != ""
	}
	return StandinURL(name, endpoints)
}

// putPath is the path of the PUT that makes provider name's stand-in
// serve a body at the API path: an id-only provider's takes a payment by
// its id (the path's last segment).
func putPath(name, path string) string {
	if name == gopay.Name || name == mollie.Name {
		return "/_standin/payments/" + path[strings.LastIndex(path, "/")+1:]
	}
	return "/_standin" + path
}

// stageAPI puts each body of api on provider name's stand-in with do,
// the stand-in's PUT.
func stageAPI(name string, api map[string][]byte, do func(*http.Request) (int, error)) error {
	for path, body := range api {
		req, err := http.NewRequest(http.MethodPut, putPath(name, path), bytes.NewReader(body))
		if err != nil {
			return err
		}
		code, err := do(req)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("answered %d", code)
		}
		if err != nil {
			return fmt.Errorf("put %s on the %s stand-in: %w", path, name, err)
		}
	}
	return nil
}

// StageRunning puts what ev's provider name serves about it (ev.API) on
// the stand-in of the running `hookinbox dev` stack with these
// endpoints, over HTTP, as Signed does in process.
func StageRunning(ctx context.Context, client *http.Client, name string, ev sample.Event, endpoints map[string]string) error {
	if len(ev.API) == 0 {
		return nil
	}
	base, ok := apiStandinURL(name, endpoints)
	if !ok {
		return fmt.Errorf("this %s delivery needs a running hookinbox dev: its stand-in serves what the processor fetches", name)
	}
	return stageAPI(name, ev.API, func(req *http.Request) (int, error) {
		u, err := req.URL.Parse(base + req.URL.Path)
		if err != nil {
			return 0, err
		}
		req.URL = u
		resp, err := client.Do(req.WithContext(ctx))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	})
}

// stage puts ev.API on the stand-in of p in process.
func (s *Stack) stage(p provider.Provider, ev sample.Event) error {
	if len(ev.API) == 0 {
		return nil
	}
	h := s.standin(p.Name())
	if h == nil {
		return fmt.Errorf("no stand-in serves %s's API", p.Name())
	}
	return stageAPI(p.Name(), ev.API, func(req *http.Request) (int, error) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, nil
	})
}

// Senders returns the senders of hookinbox's providers and of extra, a
// team's, by provider name.
func Senders(extra ...sample.Sender) map[string]sample.Sender {
	m := map[string]sample.Sender{}
	for _, s := range append(builtin.Senders(), extra...) {
		m[s.Provider.Name()] = s
	}
	return m
}
