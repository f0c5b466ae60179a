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
	"github.com/hookinbox/hookinbox/provider/sample"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/webhook"
)

type sendFlags struct {
	url, secret, stateFile string
	typ                    string
	times                  int
	id                     string
	keepID                 bool
	timeout                time.Duration
	variants               map[string]*bool   // a provider's ways of sending (sample.Sender.Variants), by flag
	options                map[string]*string // a provider's sample values (sample.Sender.Options), by flag
}

func cmdSend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f sendFlags
	fs := newFlagSet("send", "<provider> <event-type | path/to/event.json | payment id> [flags]", sendHelp(providers()))
	fs.StringVar(&f.url, "url", "", "webhook URL (default: the running stack's, else http://127.0.0.1:3000/webhooks/<provider>)")
	fs.StringVar(&f.secret, "secret", "", "signing secret(s), comma-separated (default: the running stack's, else the local ones)")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "state file of the running stack")
	fs.StringVar(&f.typ, "type", "", "the event type, for a provider that sends it beside the body (default: from the file's name)")
	fs.IntVar(&f.times, "times", 1, "send the same event this many times")
	fs.StringVar(&f.id, "id", "", "event ID to use (default: a fresh one)")
	fs.BoolVar(&f.keepID, "keep-id", false, "send a file's event with the ID it has")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "timeout of each delivery")
	f.variants, f.options = map[string]*bool{}, map[string]*string{}
	for _, p := range providers().All() {
		for _, v := range senders()[p.Name()].Variants {
			f.variants[v.Name] = fs.Bool(v.Name, false, v.Usage)
		}
		for _, o := range senders()[p.Name()].Options {
			f.options[o.Name] = fs.String(o.Name, "", o.Usage)
		}
	}
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 2 {
		return usagef("want a provider and an event type or file, e.g. %s", strings.TrimPrefix(sendExample(providers()), "hookinbox "))
	}
	return sendProvider(ctx, rest[0], rest[1], f, stdout)
}

// sendHelp is send's help: what it does, then how each provider signs
// and what it reads (sample.Sender.Help), then their examples.
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
testdata/<provider>/ (the current directory's, else hookinbox's), which
its Sample gives fresh IDs, and signs it:
`)
	var examples []string
	for _, p := range reg.All() {
		help := senders()[p.Name()].Help
		if help == "" {
			help = "as the provider's Sign does"
		}
		fmt.Fprintf(&b, "  %-9s %s\n", p.Name(), strings.ReplaceAll(strings.TrimSpace(help), "\n", "\n            "))
		examples = append(examples, senders()[p.Name()].Examples...)
	}
	b.WriteString("\nExamples:\n")
	for _, e := range examples {
		b.WriteString("  " + e + "\n")
	}
	return b.String()
}

// sendExample is the registry's first example command line.
func sendExample(reg *provider.Registry) string {
	for _, p := range reg.All() {
		if ex := senders()[p.Name()].Examples; len(ex) > 0 {
			return ex[0]
		}
	}
	return "hookinbox send <provider> <file>"
}

// providerDelivery is one delivery, built once and sent --times times.
type providerDelivery struct {
	url      string
	req      webhook.Request
	key, typ string
}

// teamSenders are a team's own providers' senders, given to Main.
var teamSenders []sample.Sender

// providers is the registry send, dev and chaos speak: hookinbox's and
// the team's (Main).
func providers() *provider.Registry {
	reg, err := builtin.Registry(providersOf(teamSenders)...)
	if err != nil {
		panic(err) // Main refused them
	}
	return reg
}

// senders are how send, load and chaos sign each provider's deliveries,
// by name: hookinbox's and the team's (Main).
func senders() map[string]sample.Sender { return pipeline.Senders(teamSenders...) }

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
func firstProvider() provider.Provider { return providers().All()[0] }

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
	options, err := chosenOptions(reg, p, f)
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
	secrets, signers := sendSecrets(p, f.secret, st, variant)
	ev, err := testEvent(senders()[name], what, sample.Event{ID: f.id, Type: f.typ, Variant: variant, Options: options, KeepID: f.keepID})
	if err != nil {
		return err
	}
	var endpoints map[string]string // the running stack's stand-ins
	if st != nil {
		endpoints = st.Endpoints
	}
	if err := pipeline.StageRunning(ctx, &http.Client{Timeout: f.timeout}, name, ev, endpoints); err != nil {
		return err
	}
	d, err := signDelivery(senders()[name], ev, url, signers, secrets)
	if err != nil {
		return err
	}
	return sendTimes(ctx, stdout, f, d)
}

// sendSecrets returns the receiver's secrets, --secret's, the running
// stack's (st, when not nil) or the local ones, and those to sign with:
// a variant may need a key only senders hold (a whsk_ key).
func sendSecrets(p provider.Provider, secret string, st *devState, variant string) (secrets, signers []string) {
	env := p.Webhook().SecretEnv
	secrets = envconfig.Split(secret)
	if len(secrets) == 0 && st != nil {
		secrets = envconfig.Split(st.receiverSecret(env))
	}
	if len(secrets) == 0 {
		secrets = envconfig.Split(pipeline.LocalEnv("")[env])
	}
	signers = secrets
	if variant != "" {
		signers = append(slices.Clone(secrets), pipeline.SenderKeys[env]...)
	}
	return secrets, signers
}

// chosenVariant returns the variant flag given, if any, refusing one that
// is not p's.
func chosenVariant(reg *provider.Registry, p provider.Provider, f sendFlags) (string, error) {
	chosen := ""
	for name, set := range f.variants {
		if !*set {
			continue
		}
		if err := providersFlag(reg, p, name, func(s sample.Sender) []sample.Flag { return s.Variants }); err != nil {
			return "", err
		}
		chosen = name
	}
	return chosen, nil
}

// chosenOptions returns the option flags given, refusing one that is not
// p's.
func chosenOptions(reg *provider.Registry, p provider.Provider, f sendFlags) (map[string]string, error) {
	chosen := map[string]string{}
	for name, value := range f.options {
		if *value == "" {
			continue
		}
		if err := providersFlag(reg, p, name, func(s sample.Sender) []sample.Flag { return s.Options }); err != nil {
			return nil, err
		}
		chosen[name] = *value
	}
	return chosen, nil
}

// providersFlag refuses the flag name when it is not among p's flags of
// the kind flags returns.
func providersFlag(reg *provider.Registry, p provider.Provider, name string, flags func(sample.Sender) []sample.Flag) error {
	has := func(pr provider.Provider) bool {
		return slices.ContainsFunc(flags(senders()[pr.Name()]), func(v sample.Flag) bool { return v.Name == name })
	}
	if has(p) {
		return nil
	}
	var owners []string
	for _, other := range reg.All() {
		if has(other) {
			owners = append(owners, other.Name())
		}
	}
	return usagef("--%s is for %s deliveries only", name, strings.Join(owners, " and "))
}

// signDelivery signs ev as s does with signers and names the events it
// carries, as the receiver verifies them with secrets.
func signDelivery(s sample.Sender, ev sample.Event, url string, signers, secrets []string) (providerDelivery, error) {
	p := s.Provider
	req, err := s.Sign(ev, signers, time.Now())
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

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// testEvent returns what to send as s would send it now (s.Sample): the
// file what, or s's sample of that name (pipeline.Sample), or, for an
// id-only provider, the object id what, sent as it is.
func testEvent(s sample.Sender, what string, ev sample.Event) (sample.Event, error) {
	p := s.Provider
	if isFile(what) || strings.HasSuffix(what, ".json") {
		body, err := os.ReadFile(what)
		if err != nil {
			return ev, fmt.Errorf("%s wants a payload file, or the name of one of its samples: %w", p.Name(), err)
		}
		ev.Body, ev.File = body, filepath.Base(what)
		return s.Sampled(ev)
	}
	sampled, err := pipeline.Sample(s, what, ev)
	switch {
	case errors.Is(err, pipeline.ErrNoSample) && p.Webhook().IDOnly:
		ev.ID = what
		return ev, nil
	case errors.Is(err, pipeline.ErrNoSample):
		return ev, usagef("%q is neither a file nor a sample of %s's: %v; or send a file", what, p.Name(), err)
	}
	return sampled, err
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
