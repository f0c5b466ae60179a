package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/builtin"
	"github.com/hookinbox/hookinbox/provider/stripe"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/stripeevent"
	"github.com/hookinbox/hookinbox/webhook"
)

type sendFlags struct {
	url, secret, stateFile string
	typ                    string
	times                  int
	id                     string
	keepID                 bool
	customer, email        string
	subscription, status   string
	object                 string
	thin                   bool
	timeout                time.Duration
	variants               map[string]*bool // a provider's ways of sending (provider.Webhook.Variants), by flag
}

func cmdSend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f sendFlags
	fs := newFlagSet("send", "<provider> <event-type | path/to/event.json | payment id> [flags]", sendHelp(providers()))
	fs.StringVar(&f.url, "url", "", "webhook URL (default: the running stack's, else http://127.0.0.1:3000/webhooks/<provider>)")
	fs.StringVar(&f.secret, "secret", "", "signing secret(s), comma-separated (default: the running stack's, else the local ones)")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "state file of the running stack")
	fs.StringVar(&f.typ, "type", "", "the event type, for a provider that sends it beside the body (default: from the file's name)")
	fs.IntVar(&f.times, "times", 1, "send the same event this many times")
	fs.StringVar(&f.id, "id", "", "event ID to use (default: a fresh evt_ ID)")
	fs.BoolVar(&f.keepID, "keep-id", false, "send a file's event with the ID it has")
	fs.StringVar(&f.customer, "customer", "", "customer ID, cus_... (event types)")
	fs.StringVar(&f.email, "email", "", "customer email (event types; default the fixture's)")
	fs.StringVar(&f.subscription, "subscription", "", "subscription ID, sub_...; on checkout.session.completed makes a subscription checkout (event types)")
	fs.StringVar(&f.object, "object", "", "ID of the event's object (in_..., cs_..., sub_...; event types; default a fresh one each run)")
	fs.StringVar(&f.status, "status", "", "subscription status: active, past_due, canceled, ... (event types)")
	fs.BoolVar(&f.thin, "thin", false, "send a thin event notification (Stripe event types; needs a running hookinbox dev)")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "timeout of each delivery")
	f.variants = map[string]*bool{}
	for _, p := range providers().All() {
		for _, v := range p.Webhook().Variants {
			f.variants[v.Name] = fs.Bool(v.Name, false, v.Usage)
		}
	}
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 2 {
		return usagef("want a provider and an event type or file, e.g. send stripe checkout.session.completed")
	}
	return sendProvider(ctx, rest[0], rest[1], f, stdout)
}

// sendHelp is send's help: what it does, then how each provider signs
// and what it reads (provider.Webhook.SendHelp), then their examples.
func sendHelp(reg *provider.Registry) string {
	var b strings.Builder
	b.WriteString(`
Sends a webhook delivery to the local stack, signed exactly as its
provider signs it, and prints one line per delivery with the answer:
accepted, duplicate, or the HTTP status and error. --times N sends the
SAME delivery, byte for byte, N times.

The URL and secret come from the running stack's state file (written by
hookinbox dev) unless --url and --secret are given.

Each provider takes a file, or the name of a payload in
testdata/<provider>/ (the current directory's, else hookinbox's), and
signs it:
`)
	var examples []string
	for _, p := range reg.All() {
		help := p.Webhook().SendHelp
		if help == "" {
			help = "as the provider's Sign does"
		}
		fmt.Fprintf(&b, "  %-9s %s\n", p.Name(), strings.ReplaceAll(strings.TrimSpace(help), "\n", "\n            "))
		examples = append(examples, p.Webhook().SendExamples...)
	}
	b.WriteString("\nExamples:\n")
	for _, e := range examples {
		b.WriteString("  " + e + "\n")
	}
	return b.String()
}

// providerDelivery is one delivery, built once and sent --times times.
type providerDelivery struct {
	url      string
	req      webhook.Request
	key, typ string
}

// teamProviders are a team's own providers, given to Main.
var teamProviders []provider.Provider

// providers is the registry send, dev and chaos speak: hookinbox's and
// the team's (Main).
func providers() *provider.Registry {
	reg, err := builtin.Registry(teamProviders...)
	if err != nil {
		panic(err) // Main refused them
	}
	return reg
}

// sendProvider sends an event type or a file (or, for an id-only
// provider, an id) as provider would, signed as it signs, --times times
// with the same bytes.
func sendProvider(ctx context.Context, name, what string, f sendFlags, stdout io.Writer) error {
	reg := providers()
	p, ok := reg.Lookup(name)
	if !ok {
		return usagef("unknown provider %q: send knows %s", name, strings.Join(reg.Names(), ", "))
	}
	if f.times < 1 {
		return usagef("--times must be at least 1")
	}
	if f.id != "" && webhook.ValidateEventID(f.id) != nil {
		return usagef("--id %q: use letters, digits, '_' and '-' (like evt_1Abc)", f.id)
	}
	variant, err := chosenVariant(reg, p, f)
	if err != nil {
		return err
	}
	url := f.url
	st, err := loadState(f.stateFile)
	if err != nil {
		if !errors.Is(err, errNoStack) && (url == "" || f.secret == "") {
			return err
		}
		st = nil
	}
	if url == "" {
		base := "http://" + localAddr()
		if st != nil {
			base = st.BaseURL
		}
		url = base + "/webhooks/" + name
	}
	// The receiver's secrets: --secret, the running stack's, or the local
	// ones; a variant may need a key only senders hold (a whsk_ key).
	secrets := envconfig.Split(f.secret)
	if len(secrets) == 0 && st != nil {
		secrets = envconfig.Split(st.receiverSecret(p.Webhook().SecretEnv))
	}
	if len(secrets) == 0 {
		secrets = envconfig.Split(pipeline.LocalEnv("")[p.Webhook().SecretEnv])
	}
	signers := secrets
	if variant != "" {
		signers = append(slices.Clone(secrets), pipeline.SenderKeys[p.Webhook().SecretEnv]...)
	}
	ev, err := testEvent(ctx, p, what, f, st)
	if err != nil {
		return err
	}
	ev.Variant = variant
	d, err := signDelivery(p, ev, url, signers, secrets)
	if err != nil {
		return err
	}
	return sendTimes(ctx, stdout, f, d)
}

// chosenVariant returns the variant flag given, if any, refusing one that
// is not p's.
func chosenVariant(reg *provider.Registry, p provider.Provider, f sendFlags) (string, error) {
	chosen := ""
	for name, set := range f.variants {
		if !*set {
			continue
		}
		if !slices.ContainsFunc(p.Webhook().Variants, func(v provider.Variant) bool { return v.Name == name }) {
			for _, other := range reg.All() {
				if slices.ContainsFunc(other.Webhook().Variants, func(v provider.Variant) bool { return v.Name == name }) {
					return "", usagef("--%s is for %s deliveries only", name, other.Name())
				}
			}
		}
		chosen = name
	}
	return chosen, nil
}

// signDelivery signs ev as p does with signers and names the events it
// carries, as the receiver verifies them with secrets.
func signDelivery(p provider.Provider, ev provider.TestEvent, url string, signers, secrets []string) (providerDelivery, error) {
	req, err := p.Sign(ev, signers, time.Now())
	if err != nil {
		return providerDelivery{}, err
	}
	if len(req.Query) > 0 {
		q := neturl.Values{}
		for k, v := range req.Query {
			q.Set(k, v)
		}
		url += "?" + q.Encode()
	}
	d := providerDelivery{url: url, req: req, key: p.Name() + "#?"}
	v, err := p.Verifier(secrets, &provider.Env{})
	if err != nil {
		return d, nil // signed with keys the receiver does not hold: the events go unnamed
	}
	evs, err := v.Verify(context.Background(), req)
	if err != nil || len(evs) == 0 {
		return d, nil
	}
	var keys, types []string
	for _, e := range evs {
		keys = append(keys, e.Key().String())
		if !slices.Contains(types, e.Type) {
			types = append(types, e.Type)
		}
	}
	d.key, d.typ = strings.Join(keys, " "), strings.Join(types, ",")
	if ev.Type != "" {
		d.typ = ev.Type // as sent: a thin event's v1.<type>
	}
	return d, nil
}

// sendTimes sends d f.times times, prints one line per delivery and then
// the inspect command to paste, and fails when any delivery did not get a
// 2xx.
func sendTimes(ctx context.Context, stdout io.Writer, f sendFlags, d providerDelivery) error {
	client := &http.Client{Timeout: f.timeout}
	failed := 0
	for i := 1; i <= f.times; i++ {
		answer, ok := deliver(ctx, client, d)
		if !ok {
			failed++
		}
		fmt.Fprintf(stdout, "%d/%d %s %s → %s\n", i, f.times, d.key, d.typ, answer)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d deliveries to %s failed (is hookinbox dev running, with this --secret?)", failed, f.times, d.url)
	}
	fmt.Fprintf(stdout, "see it: hookinbox inspect '%s'\n", d.key)
	return nil
}

// stripeBody reads the file, or the real event of that type in
// testdata/stripe, and patches its ID (and, for an event type, its created
// time, customer, email and subscription).
func stripeBody(what string, f sendFlags) ([]byte, error) {
	var (
		body []byte
		at   time.Time // zero: a file keeps its created time
		err  error
	)
	switch {
	case isFile(what):
		if body, err = os.ReadFile(what); err != nil {
			return nil, err
		}
		if f.keepID && f.id == "" {
			return body, nil
		}
	case strings.ContainsAny(what, "/\\") || strings.HasSuffix(what, ".json"):
		return nil, fmt.Errorf("%s: no such file", what)
	case !validEventType(what):
		return nil, usagef("%q is neither a file nor a Stripe event type like checkout.session.completed", what)
	default:
		if body, err = verifytest.StripeFixture(what); err != nil {
			return nil, usagef("%v; or send a file", err)
		}
		at = time.Now()
	}
	var opts []verifytest.Option
	if at.IsZero() {
		// A file is sent about the objects it names.
	} else if opts, err = verifytest.FreshStripe(body); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if f.object != "" {
		opts = append(opts, verifytest.WithObjectID(f.object))
	}
	if f.customer != "" {
		opts = append(opts, verifytest.WithCustomer(f.customer))
	}
	if f.email != "" {
		opts = append(opts, verifytest.WithEmail(f.email))
	}
	if f.subscription != "" || f.status != "" {
		opts = append(opts, verifytest.WithSubscription(f.subscription, f.status))
	}
	body, err = verifytest.PatchStripe(body, orFresh(f.id, stripeevent.NewID()), at, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return body, nil
}

// thinBody returns the thin notification of the snapshot event body: a
// fresh v2 event id, type v1.<type>, created now, and the event's
// data.object as related object. It first puts the v2 event and the
// object on the running stack's Stripe stand-in (PUT /_standin/...), as
// Stripe holds them before it notifies.
func thinBody(ctx context.Context, snapshot []byte, f sendFlags, st *devState) ([]byte, error) {
	if st == nil || st.Endpoints["STRIPE_API_URL"] == "" {
		return nil, errors.New("--thin needs a running hookinbox dev: its Stripe stand-in serves the v2 event and the object the processor fetches")
	}
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	var obj struct{ ID, Object string }
	if err := json.Unmarshal(snapshot, &ev); err != nil || json.Unmarshal(ev.Data.Object, &obj) != nil || obj.ID == "" || obj.Object == "" {
		return nil, errors.New("--thin: the event has no data.object with an id and an object type")
	}
	rel := verifytest.StripeRelated{ID: obj.ID, Type: obj.Object, URL: stripeObjectPath(obj.Object, obj.ID)}
	id := orFresh(f.id, "evt_test_65"+strings.TrimPrefix(stripeevent.NewID(), "evt_"))
	thin := verifytest.StripeThin("v1."+ev.Type, id, time.Now(), rel, "")
	api := strings.TrimSuffix(st.Endpoints["STRIPE_API_URL"], "/")
	for path, body := range map[string][]byte{rel.URL: ev.Data.Object, "/v2/core/events/" + id: thin} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, api+"/_standin"+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		resp, err := (&http.Client{Timeout: f.timeout}).Do(req)
		if err != nil {
			return nil, fmt.Errorf("put %s on the Stripe stand-in: %w", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("put %s on the Stripe stand-in: %s", path, resp.Status)
		}
	}
	return thin, nil
}

// stripeObjectPath is the API path of a v1 object: checkout.session
// cs_1 is /v1/checkout/sessions/cs_1, invoice in_1 /v1/invoices/in_1.
func stripeObjectPath(object, id string) string {
	parts := strings.Split(object, ".")
	parts[len(parts)-1] += "s"
	return "/v1/" + strings.Join(parts, "/") + "/" + id
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// validEventType accepts dotted lower-case names like invoice.paid.
func validEventType(t string) bool {
	if !strings.Contains(t, ".") {
		return false
	}
	for _, r := range t {
		if !(r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// testEvent reads what to send: for Stripe an event type or a file
// (stripeBody, --thin), for an id-only provider a payment id or file
// (which the running stack's stand-in takes first), for the others a file
// or the name of one of hookinbox's payloads (providerPayload).
func testEvent(ctx context.Context, p provider.Provider, what string, f sendFlags, st *devState) (provider.TestEvent, error) {
	if p.Name() == stripe.Name {
		return stripeTestEvent(ctx, what, f, st)
	}
	if p.Webhook().IDOnly && !isFile(what) {
		return provider.TestEvent{ID: what}, nil
	}
	if p.Webhook().IDOnly {
		body, err := os.ReadFile(what)
		if err != nil {
			return provider.TestEvent{}, err
		}
		if err := stageStandin(ctx, p, body, f, st); err != nil {
			return provider.TestEvent{}, err
		}
		return provider.TestEvent{Body: body}, nil
	}
	body, err := providerPayload(p.Name(), what)
	if err != nil {
		return provider.TestEvent{}, err
	}
	// A payload name is its file's: orders/paid is orders_paid.json.
	file := filepath.Base(what)
	if !isFile(what) {
		file = strings.ReplaceAll(what, "/", "_") + ".json"
	}
	return provider.TestEvent{ID: f.id, Type: f.typ, Body: body, File: file, Fresh: !isFile(what)}, nil
}

// providerPayload returns the file what, or else the payload of that
// name (testdata/<provider>/<what, / as _>.json) in the current
// directory (a team's module, for its own providers) or hookinbox's.
func providerPayload(name, what string) ([]byte, error) {
	if isFile(what) || strings.HasSuffix(what, ".json") {
		body, err := os.ReadFile(what)
		if err != nil {
			return nil, fmt.Errorf("%s wants a payload file, or one of hookinbox's payload names: %w", name, err)
		}
		return body, nil
	}
	file := strings.ReplaceAll(what, "/", "_") + ".json"
	if body, err := os.ReadFile(filepath.Join("testdata", name, file)); err == nil {
		return body, nil // the team's own
	}
	root, err := devstack.RepoRoot("")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "testdata", name)
	body, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		var names []string
		for _, p := range paths {
			names = append(names, strings.Replace(strings.TrimSuffix(filepath.Base(p), ".json"), "_", "/", 1))
		}
		return nil, usagef("%s: no such file, and hookinbox has no %s payload of that name (it has %s): send a file", what, name, strings.Join(names, ", "))
	}
	return body, nil
}

// stripeTestEvent is the Stripe event of the type or file what, patched
// as the flags say, or its thin notification.
func stripeTestEvent(ctx context.Context, what string, f sendFlags, st *devState) (provider.TestEvent, error) {
	if f.status != "" && f.subscription == "" && !strings.HasPrefix(what, "customer.subscription.") {
		return provider.TestEvent{}, usagef("--status needs --subscription, or a customer.subscription.* event")
	}
	body, err := stripeBody(what, f)
	if err != nil {
		return provider.TestEvent{}, err
	}
	if f.thin {
		if body, err = thinBody(ctx, body, f, st); err != nil {
			return provider.TestEvent{}, err
		}
	}
	var head struct{ Type string }
	if err := json.Unmarshal(body, &head); err != nil {
		return provider.TestEvent{}, fmt.Errorf("event is not JSON: %w", err)
	}
	return provider.TestEvent{Type: head.Type, Body: body}, nil
}

// stageStandin sets the object of an id-only notification on the running
// stack's stand-in (a payment: the provider's state changes before it
// notifies), under the id the provider's notification of it carries.
func stageStandin(ctx context.Context, p provider.Provider, raw []byte, f sendFlags, st *devState) error {
	id := notifiedID(p, raw)
	if id == "" || neturl.PathEscape(id) != id {
		return fmt.Errorf("the file is not a %s payment with an id", p.Name())
	}
	var api string
	if st != nil {
		api, _ = pipeline.StandinURL(p.Name(), st.Endpoints)
	}
	if api == "" {
		return errors.New("setting a payment needs a running hookinbox dev (its stand-in); send a payment id to notify only")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, api+"/_standin/payments/"+id, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: f.timeout}).Do(req)
	if err != nil {
		return fmt.Errorf("set the payment on the stand-in: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("set the payment on the stand-in: %s", resp.Status)
	}
	return nil
}

// notifiedID returns the id an unsigned provider's notification of the
// object raw carries, as its receiver reads it; "" when there is none.
func notifiedID(p provider.Provider, raw []byte) string {
	req, err := p.Sign(provider.TestEvent{Body: raw}, nil, time.Now())
	if err != nil {
		return ""
	}
	v, err := p.Verifier(nil, &provider.Env{})
	if err != nil {
		return ""
	}
	evs, err := v.Verify(context.Background(), req)
	if err != nil || len(evs) != 1 {
		return ""
	}
	return evs[0].ID
}

// deliver sends d and describes the answer; ok is false unless 2xx.
func deliver(ctx context.Context, client *http.Client, d providerDelivery) (string, bool) {
	var body io.Reader
	if d.req.Body != nil {
		body = bytes.NewReader(d.req.Body)
	}
	req, err := http.NewRequestWithContext(ctx, d.req.Method, d.url, body)
	if err != nil {
		return "error: " + err.Error(), false
	}
	for k, v := range d.req.Header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "error: " + err.Error(), false
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var answer struct{ Status, Error, Message string }
	_ = json.Unmarshal(raw, &answer)
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if ok && answer.Status != "" {
		return answer.Status, true
	}
	msg := strings.TrimSpace(answer.Error + answer.Message)
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
	}
	return strings.TrimSpace(resp.Status + " " + msg), ok
}

func orFresh(id, fresh string) string {
	if id != "" {
		return id
	}
	return fresh
}
