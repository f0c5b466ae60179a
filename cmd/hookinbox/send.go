package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/verify"
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
	form, unprefixed, v1a  bool
}

func cmdSend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f sendFlags
	fs := newFlagSet("send", "<provider> <event-type | path/to/event.json | payment id> [flags]", `
Sends a webhook delivery to the local stack, signed exactly as Stripe signs
it (Stripe-Signature: t=<unix>,v1=<HMAC-SHA256 of "<t>.<body>">), and prints
one line per delivery with the answer: accepted, duplicate, or the HTTP
status and error.

An event type (checkout.session.completed, customer.subscription.created,
customer.subscription.updated, customer.subscription.deleted, invoice.paid,
...) sends the real event of that type in hookinbox's testdata/stripe/
about objects of its own (a fresh invoice, session or subscription ID each
run, unless --object or --subscription names one), with the --customer,
--email, --subscription and --status given; a path sends that file as it
is. Either way the event gets a fresh evt_ ID unless --id is given (or,
for a file, --keep-id). --times N sends the SAME event, byte for byte, N times.

--thin sends the event type as a thin event notification (object
v2.core.event, type v1.<event type>, a related_object), as a thin event
destination does; it first puts the v2 event and the object on the running
stack's Stripe stand-in, which the processor fetches them from.

The URL and secret come from the running stack's state file (written by
hookinbox dev) unless --url and --secret are given.

The other providers take a file, or the name of one of hookinbox's own
payloads (testdata/<provider>/: a Shopify topic orders/paid, a GitHub
event issues, a Standard Webhooks type invoice.paid, an Adyen event code
AUTHORISATION; a Shopify order gets a fresh order ID), and sign it exactly
as they do:
  github    X-Hub-Signature-256 (sha256= hex HMAC of the body); the event is
            --type or the file's name (testdata/github/issues.json: issues);
            a fresh X-GitHub-Delivery unless --id; --form sends it as a hook
            whose content type is application/x-www-form-urlencoded does
            (payload=<URL-encoded JSON>, signed over the form)
  shopify   X-Shopify-Hmac-Sha256 (base64 HMAC of the body); the topic is
            --type or the file's name with _ for / (orders_paid: orders/paid);
            a fresh X-Shopify-Event-Id unless --id; --unprefixed names the
            headers without X- (Shopify-Hmac-Sha256, ...), as Shopify's newer
            deliveries do
  standard  Standard Webhooks webhook-id, -timestamp, -signature (v1,<base64>
            HMAC of id.timestamp.body under each whsec_ secret, v1a,<base64>
            ed25519 signature under each whsk_ key); a fresh msg_ id unless
            --id; --v1a signs v1a only, with the whsk_ keys of --secret or
            the local stack's signing key
  adyen     every notification item's additionalData.hmacSignature
            (base64 HMAC of Adyen's field order under the hex key)
  gopay     GET ?id=<payment id>, unsigned as GoPay sends it; given a payment
            file (testdata/gopay/payment.PAID.json) it first sets that payment
            on the local stack's GoPay stand-in, whose API the processor asks.

Examples:
  hookinbox send stripe checkout.session.completed --times 3
  hookinbox send stripe checkout.session.completed --thin
  hookinbox send shopify orders/paid --times 2
  hookinbox send shopify my-order.json --type orders/paid
  hookinbox send github testdata/github/issues.json --form
  hookinbox send standard testdata/standard/invoice.paid.json --v1a
  hookinbox send adyen testdata/adyen/AUTHORISATION.json
  hookinbox send gopay testdata/gopay/payment.PAID.json --times 2
  hookinbox send stripe customer.subscription.updated --subscription sub_123 --status past_due
  hookinbox send stripe testdata/stripe/invoice.paid.json`)
	fs.StringVar(&f.url, "url", "", "webhook URL (default: the running stack's, else http://127.0.0.1:3000/webhooks/<provider>)")
	fs.StringVar(&f.secret, "secret", "", "signing secret(s), comma-separated (default: the running stack's, else the local one: "+pipeline.StripeSecret+" for Stripe)")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "state file of the running stack")
	fs.StringVar(&f.typ, "type", "", "GitHub event or Shopify topic (default: from the file's name)")
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
	fs.BoolVar(&f.form, "form", false, "github: send as a form-encoded hook (payload=<URL-encoded JSON>)")
	fs.BoolVar(&f.unprefixed, "unprefixed", false, "shopify: name the headers without X- (Shopify-Hmac-Sha256, ...)")
	fs.BoolVar(&f.v1a, "v1a", false, "standard: sign v1a (ed25519) with the whsk_ keys of --secret, else the local signing key")
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 2 {
		return usagef("want a provider and an event type or file, e.g. send stripe checkout.session.completed")
	}
	return sendProvider(ctx, rest[0], rest[1], f, stdout)
}

// localSecrets is the secret send signs with for each provider when no
// --secret is given and no stack is running.
var localSecrets = map[string]string{
	verify.StripeProvider:   pipeline.StripeSecret,
	verify.GitHubProvider:   pipeline.GitHubSecret,
	verify.ShopifyProvider:  pipeline.ShopifySecret,
	verify.StandardProvider: pipeline.StandardSecret,
	verify.AdyenProvider:    pipeline.AdyenHMACKey,
}

// providerDelivery is one delivery, built once and sent --times times.
type providerDelivery struct {
	method, url string
	header      map[string]string
	sign        func() map[string]string // if set, the header of each send: Stripe signs each attempt anew
	body        []byte
	key, typ    string
}

// sendProvider sends an event type or a file (or, for GoPay, a payment) as
// provider would, signed as it signs, --times times with the same bytes.
func sendProvider(ctx context.Context, provider, what string, f sendFlags, stdout io.Writer) error {
	spec, ok := verify.Lookup(provider)
	if !ok {
		var names []string
		for _, s := range verify.Specs {
			names = append(names, s.Name)
		}
		return usagef("unknown provider %q: send knows %s", provider, strings.Join(names, ", "))
	}
	if f.times < 1 {
		return usagef("--times must be at least 1")
	}
	if f.id != "" && webhook.ValidateEventID(f.id) != nil {
		return usagef("--id %q: use letters, digits, '_' and '-' (like evt_1Abc)", f.id)
	}
	if provider == verify.StripeProvider && f.status != "" && f.subscription == "" && !strings.HasPrefix(what, "customer.subscription.") {
		return usagef("--status needs --subscription, or a customer.subscription.* event")
	}
	switch {
	case f.form && provider != verify.GitHubProvider:
		return usagef("--form is for github deliveries only")
	case f.unprefixed && provider != verify.ShopifyProvider:
		return usagef("--unprefixed is for shopify deliveries only")
	case f.v1a && provider != verify.StandardProvider:
		return usagef("--v1a is for standard deliveries only")
	}
	url, secret := f.url, f.secret
	st, err := loadState(f.stateFile)
	if err != nil {
		if !errors.Is(err, errNoStack) && (url == "" || secret == "") {
			return err
		}
		st = nil
	}
	if url == "" {
		base := "http://" + localAddr()
		if st != nil {
			base = st.BaseURL
		}
		url = base + "/webhooks/" + provider
	}
	if secret == "" && st != nil {
		secret = st.functionEnv("ReceiverFunction", spec.SecretEnv)
		if provider == verify.StripeProvider {
			secret = st.StripeWebhookSecret
		}
	}
	if secret == "" {
		secret = localSecrets[provider]
	}
	d, err := buildDelivery(ctx, provider, what, url, secret, f, st)
	if err != nil {
		return err
	}
	return sendTimes(ctx, stdout, f, d)
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

// stripeHeader is the header Stripe sends body with, signed now.
func stripeHeader(body []byte, secrets []string) map[string]string {
	return map[string]string{
		"Content-Type":     "application/json; charset=utf-8",
		"User-Agent":       "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
		"Stripe-Signature": verifytest.SignStripe(body, time.Now(), secrets...),
	}
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

// buildDelivery reads the file (for Stripe, or the event of that type)
// and signs it as provider does.
func buildDelivery(ctx context.Context, provider, what, url, secret string, f sendFlags, st *devState) (providerDelivery, error) {
	switch provider {
	case verify.GoPayProvider:
		return gopayDelivery(ctx, what, url, f, st)
	case verify.StripeProvider:
		body, err := stripeBody(what, f)
		if err != nil {
			return providerDelivery{}, err
		}
		if f.thin {
			if body, err = thinBody(ctx, body, f, st); err != nil {
				return providerDelivery{}, err
			}
		}
		var head struct{ ID, Type string }
		if err := json.Unmarshal(body, &head); err != nil {
			return providerDelivery{}, fmt.Errorf("event is not JSON: %w", err)
		}
		return providerDelivery{method: http.MethodPost, url: url, body: body, key: "stripe#" + head.ID, typ: head.Type,
			sign: func() map[string]string { return stripeHeader(body, envconfig.Split(secret)) }}, nil
	}
	body, err := providerPayload(provider, what)
	if err != nil {
		return providerDelivery{}, err
	}
	name := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(what), ".json"), "/", "_")
	if !isFile(what) {
		name = strings.ReplaceAll(what, "/", "_")
	}
	typ := f.typ
	d := providerDelivery{method: http.MethodPost, url: url, body: body}
	switch provider {
	case verify.GitHubProvider:
		if typ == "" {
			typ = name
		}
		id := orFresh(f.id, uuid())
		d.header, d.key, d.typ = verifytest.GitHubHeaders(body, secret, id, typ), "github#"+id, typ
		if f.form {
			d.body, d.header = verifytest.GitHubForm(body, secret, id, typ)
		}
	case verify.ShopifyProvider:
		if typ == "" {
			typ = strings.Replace(name, "_", "/", 1)
		}
		id := orFresh(f.id, uuid())
		d.header, d.key, d.typ = verifytest.ShopifyHeaders(body, secret, id, typ, time.Now()), "shopify#"+id, typ
		if f.unprefixed {
			d.header = verifytest.ShopifyUnprefixed(d.header)
		}
	case verify.StandardProvider:
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(body, &head)
		id := orFresh(f.id, "msg_"+strings.TrimPrefix(stripeevent.NewID(), "evt_"))
		signers := envconfig.Split(secret) // a whpk_ public key among them signs nothing
		if f.v1a {
			signers = slices.DeleteFunc(signers, func(s string) bool { return !strings.HasPrefix(s, "whsk_") })
			if len(signers) == 0 {
				signers = []string{pipeline.StandardSigningKey}
			}
		}
		d.header, d.key, d.typ = verifytest.StandardHeaders(body, id, time.Now(), signers...), "standard#"+id, head.Type
	case verify.AdyenProvider:
		signed, err := verifytest.SignAdyenFile(body, envconfig.Split(secret)[0])
		if err != nil {
			return providerDelivery{}, fmt.Errorf("%s: %w", what, err)
		}
		var batch struct {
			Items []struct {
				Item struct{ PspReference, EventCode string } `json:"NotificationRequestItem"`
			} `json:"notificationItems"`
		}
		_ = json.Unmarshal(signed, &batch)
		var keys []string
		for _, it := range batch.Items {
			keys = append(keys, "adyen#"+it.Item.PspReference+"-"+it.Item.EventCode)
		}
		d.body, d.header, d.key, d.typ = signed, map[string]string{"content-type": "application/json"}, strings.Join(keys, " "), "notification"
	default:
		return providerDelivery{}, usagef("send does not know how %s signs", provider)
	}
	return d, nil
}

// providerPayload returns the file what, or else hookinbox's own payload
// of that name (testdata/<provider>/<what, / as _>.json), a Shopify order
// with a fresh order ID.
func providerPayload(provider, what string) ([]byte, error) {
	if isFile(what) || strings.HasSuffix(what, ".json") {
		body, err := os.ReadFile(what)
		if err != nil {
			return nil, fmt.Errorf("%s wants a payload file, or one of hookinbox's payload names: %w", provider, err)
		}
		return body, nil
	}
	root, err := devstack.RepoRoot("")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "testdata", provider)
	body, err := os.ReadFile(filepath.Join(dir, strings.ReplaceAll(what, "/", "_")+".json"))
	if err != nil {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		var names []string
		for _, p := range paths {
			names = append(names, strings.Replace(strings.TrimSuffix(filepath.Base(p), ".json"), "_", "/", 1))
		}
		return nil, usagef("%s: no such file, and hookinbox has no %s payload of that name (it has %s): send a file", what, provider, strings.Join(names, ", "))
	}
	if provider == verify.ShopifyProvider {
		return verifytest.FreshShopifyOrder(body)
	}
	return body, nil
}

// gopayDelivery is GoPay's unsigned GET ?id=<payment id>. Given a payment
// file it first sets the payment on the running stack's GoPay stand-in
// (GoPay's own state changes before it notifies).
func gopayDelivery(ctx context.Context, what, url string, f sendFlags, st *devState) (providerDelivery, error) {
	id := what
	if isFile(what) {
		raw, err := os.ReadFile(what)
		if err != nil {
			return providerDelivery{}, err
		}
		var p struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || p.ID == "" {
			return providerDelivery{}, fmt.Errorf("%s is not a GoPay payment with an id", what)
		}
		id = p.ID.String()
		if st == nil || st.Endpoints["GOPAY_API_URL"] == "" {
			return providerDelivery{}, errors.New("setting a payment needs a running hookinbox dev (its GoPay stand-in); send a payment id to notify only")
		}
		api := strings.TrimSuffix(st.Endpoints["GOPAY_API_URL"], "/api")
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, api+"/_standin/payments/"+id, bytes.NewReader(raw))
		if err != nil {
			return providerDelivery{}, err
		}
		resp, err := (&http.Client{Timeout: f.timeout}).Do(req)
		if err != nil {
			return providerDelivery{}, fmt.Errorf("set the payment on the GoPay stand-in: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return providerDelivery{}, fmt.Errorf("set the payment on the GoPay stand-in: %s", resp.Status)
		}
	}
	if err := verify.GoPayID(id); err != nil {
		return providerDelivery{}, usagef("%q is neither a GoPay payment file nor a payment id", what)
	}
	return providerDelivery{method: http.MethodGet, url: url + "?id=" + id, key: "gopay#" + id, typ: verify.GoPayNotification}, nil
}

// deliver sends d and describes the answer; ok is false unless 2xx.
func deliver(ctx context.Context, client *http.Client, d providerDelivery) (string, bool) {
	var body io.Reader
	if d.body != nil {
		body = bytes.NewReader(d.body)
	}
	req, err := http.NewRequestWithContext(ctx, d.method, d.url, body)
	if err != nil {
		return "error: " + err.Error(), false
	}
	header := d.header
	if d.sign != nil {
		header = d.sign()
	}
	for k, v := range header {
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

// uuid returns a random version-4 UUID, as GitHub and Shopify id deliveries.
func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[:4], b[4:6], b[6:8], b[8:10], b[10:])
}
