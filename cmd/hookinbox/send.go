package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

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
	timeout                time.Duration
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
...) sends the real event of that type in testdata/stripe/, with the
--customer, --email, --subscription and --status given; a path sends that
file. Either way the event gets a fresh evt_ ID unless --id is given (or,
for a file, --keep-id). --times N sends the SAME event, byte for byte, N times.

The URL and secret come from the running stack's state file (written by
hookinbox dev) unless --url and --secret are given.

The other providers take a file and sign it exactly as they do:
  github    X-Hub-Signature-256 (sha256= hex HMAC of the body); the event is
            --type or the file's name (testdata/github/issues.json: issues);
            a fresh X-GitHub-Delivery unless --id
  shopify   X-Shopify-Hmac-Sha256 (base64 HMAC of the body); the topic is
            --type or the file's name with _ for / (orders_paid: orders/paid);
            a fresh X-Shopify-Event-Id unless --id
  standard  Standard Webhooks webhook-id, -timestamp, -signature (v1,<base64>
            HMAC of id.timestamp.body); a fresh msg_ id unless --id
  adyen     every notification item's additionalData.hmacSignature
            (base64 HMAC of Adyen's field order under the hex key)
  gopay     GET ?id=<payment id>, unsigned as GoPay sends it; given a payment
            file (testdata/gopay/payment.PAID.json) it first sets that payment
            on the local stack's GoPay stand-in, whose API the processor asks.

Examples:
  hookinbox send stripe checkout.session.completed --times 3
  hookinbox send shopify testdata/shopify/orders_paid.json --times 2
  hookinbox send adyen testdata/adyen/AUTHORISATION.json
  hookinbox send gopay testdata/gopay/payment.PAID.json --times 2
  hookinbox send stripe customer.subscription.updated --subscription sub_123 --status past_due
  hookinbox send stripe testdata/stripe/invoice.paid.json`)
	fs.StringVar(&f.url, "url", "", "webhook URL (default: the running stack's, else http://127.0.0.1:3000/webhooks/stripe)")
	fs.StringVar(&f.secret, "secret", "", "signing secret(s), comma-separated (default: the running stack's, else "+pipeline.StripeSecret+")")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "state file of the running stack")
	fs.StringVar(&f.typ, "type", "", "GitHub event or Shopify topic (default: from the file's name)")
	fs.IntVar(&f.times, "times", 1, "send the same event this many times")
	fs.StringVar(&f.id, "id", "", "event ID to use (default: a fresh evt_ ID)")
	fs.BoolVar(&f.keepID, "keep-id", false, "send a file's event with the ID it has")
	fs.StringVar(&f.customer, "customer", "", "customer ID, cus_... (event types)")
	fs.StringVar(&f.email, "email", "", "customer email (event types; default the fixture's)")
	fs.StringVar(&f.subscription, "subscription", "", "subscription ID, sub_...; on checkout.session.completed makes a subscription checkout (event types)")
	fs.StringVar(&f.status, "status", "", "subscription status: active, past_due, canceled, ... (event types)")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "timeout of each delivery")
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 2 {
		return usagef("want a provider and an event type or file, e.g. send stripe checkout.session.completed")
	}
	if rest[0] != "stripe" {
		return sendProvider(ctx, rest[0], rest[1], f, stdout)
	}
	if f.times < 1 {
		return usagef("--times must be at least 1")
	}
	if f.id != "" && webhook.ValidateEventID(f.id) != nil {
		return usagef("--id %q: use letters, digits, '_' and '-' (like evt_1Abc)", f.id)
	}
	if f.status != "" && f.subscription == "" && !strings.HasPrefix(rest[1], "customer.subscription.") {
		return usagef("--status needs --subscription, or a customer.subscription.* event")
	}

	url, secret := f.url, f.secret
	if url == "" || secret == "" {
		st, err := loadState(f.stateFile)
		switch {
		case err == nil:
			if url == "" {
				url = st.WebhookURL
			}
			if secret == "" {
				secret = st.StripeWebhookSecret
			}
		case errors.Is(err, errNoStack):
			if url == "" {
				addr := defaultAddr
				if a := os.Getenv(addrEnv); a != "" {
					addr = a
				}
				url = "http://" + addr + "/webhooks/stripe"
			}
			if secret == "" {
				secret = pipeline.StripeSecret
			}
		default:
			return err
		}
	}

	body, err := stripeBody(rest[1], f)
	if err != nil {
		return err
	}
	var head struct{ ID, Type string }
	if err := json.Unmarshal(body, &head); err != nil {
		return fmt.Errorf("event is not JSON: %w", err)
	}

	return sendTimes(ctx, stdout, f, url, "stripe#"+head.ID, head.Type, func(ctx context.Context, client *http.Client) (string, bool) {
		return deliver(ctx, client, url, body, envconfig.Split(secret))
	})
}

// sendTimes makes f.times deliveries of one event with deliverOnce,
// prints one line per delivery and then the inspect command to paste,
// and fails when any delivery did not get a 2xx.
func sendTimes(ctx context.Context, stdout io.Writer, f sendFlags, url, key, typ string, deliverOnce func(context.Context, *http.Client) (string, bool)) error {
	client := &http.Client{Timeout: f.timeout}
	failed := 0
	for i := 1; i <= f.times; i++ {
		answer, ok := deliverOnce(ctx, client)
		if !ok {
			failed++
		}
		fmt.Fprintf(stdout, "%d/%d %s %s → %s\n", i, f.times, key, typ, answer)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d deliveries to %s failed (is hookinbox dev running, with this --secret?)", failed, f.times, url)
	}
	fmt.Fprintf(stdout, "see it: hookinbox inspect '%s'\n", key)
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

// deliver POSTs one signed delivery and describes the answer; ok is false
// unless the answer is a 2xx.
func deliver(ctx context.Context, client *http.Client, url string, body []byte, secrets []string) (string, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "error: " + err.Error(), false
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	req.Header.Set("Stripe-Signature", verifytest.SignStripe(body, time.Now(), secrets...))
	resp, err := client.Do(req)
	if err != nil {
		return "error: " + err.Error(), false
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var answer struct {
		Status  string `json:"status"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &answer)
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if ok && answer.Status != "" {
		return answer.Status, true
	}
	msg := strings.TrimSpace(answer.Error + answer.Message)
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s", resp.Status, msg)), ok
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
