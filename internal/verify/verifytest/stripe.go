package verifytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// maxMetadataValue is the longest metadata value Stripe stores.
const maxMetadataValue = 500

// Option patches one field of the event StripeEvent returns.
type Option func(*patch)

type patch struct {
	sample              map[string]string // stripe.Provider.Sample's options
	payment, apiVersion string
	livemode            *bool
	size                int
}

// WithObjectID sets the ID of the event's object (in_..., cs_..., pi_...):
// every occurrence of the fixture's, so each event can be about an object
// of its own, or several events about one.
func WithObjectID(id string) Option { return func(p *patch) { p.sample["object"] = id } }

// WithRelated sets the ID the object's field (payment_intent, charge,
// latest_invoice, latest_charge, ...) names, every occurrence of it, so
// the events about one purchase name the same objects. A field the object
// does not have is left alone.
func WithRelated(field, id string) Option { return func(p *patch) { p.sample[field] = id } }

// WithCustomer sets the customer ID ("cus_...") the object belongs to:
// every occurrence of the fixture's customer ID (the object's own ID when
// it is a customer).
func WithCustomer(id string) Option { return func(p *patch) { p.sample["customer"] = id } }

// WithSession sets a checkout session's ID ("cs_..."). Without it a
// checkout session gets an ID made from the event's ("cs_test_" and the
// event ID after "evt_"): each event is its own checkout, as Stripe sends
// one checkout.session.completed a session, unless two name one session.
func WithSession(id string) Option { return func(p *patch) { p.sample["session"] = id } }

// WithEmail sets a checkout session's customer_details.email, or a
// customer's email.
func WithEmail(addr string) Option { return func(p *patch) { p.sample["email"] = addr } }

// WithSubscription sets the subscription ID ("sub_...", every occurrence of
// the fixture's) and, unless empty, a subscription's status ("active",
// "past_due", "canceled", ...). On a checkout session it makes the session
// a mode "subscription" one.
func WithSubscription(id, status string) Option {
	return func(p *patch) { p.sample["subscription"], p.sample["status"] = id, status }
}

// WithPaymentStatus sets a checkout session's payment_status: "paid" (the
// fixture's), "unpaid" (a delayed payment method, settled later by
// checkout.session.async_payment_succeeded) or "no_payment_required".
func WithPaymentStatus(status string) Option { return func(p *patch) { p.payment = status } }

// WithAPIVersion sets the event's api_version, e.g. one that differs from
// the version stripe-go expects.
func WithAPIVersion(v string) Option { return func(p *patch) { p.apiVersion = v } }

// WithLivemode marks the event and its object as live-mode ones.
func WithLivemode(live bool) Option { return func(p *patch) { p.livemode = &live } }

// WithSize pads the object's metadata, in keys of at most 500 bytes as
// Stripe allows, so the event is n bytes long: exactly, unless n is less
// than the unpadded event or only a few bytes more.
func WithSize(n int) Option { return func(p *patch) { p.size = n } }

// StripeFixture returns the real Stripe delivery of event type typ kept in
// the repository's testdata/stripe/<typ>.json. A type without a file of its
// own takes the file of another type about the same object, with its type
// set (checkout.session.async_payment_succeeded is delivered with the same
// checkout.session as checkout.session.completed); a type with neither is an
// error that names the types there are.
func StripeFixture(typ string) ([]byte, error) {
	files, err := stripeFixtures()
	if err != nil {
		return nil, err
	}
	if body, ok := files[typ]; ok {
		return bytes.Clone(body), nil
	}
	object := typ[:max(strings.LastIndex(typ, "."), 0)]
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		if object != "" && strings.HasPrefix(name, object+".") && !strings.Contains(name[len(object)+1:], ".") {
			return setField(files[name], "type", typ)
		}
	}
	return nil, fmt.Errorf("no Stripe fixture for %s: testdata/stripe has %s", typ, strings.Join(names, ", "))
}

// StripeEvent returns the fixture of event type typ (StripeFixture) with
// the event ID id, created at at.Unix(), and opts applied (patchStripe). It
// panics when there is no fixture for typ: a test's own mistake.
func StripeEvent(typ, id string, at time.Time, opts ...Option) []byte {
	body, err := StripeFixture(typ)
	if err == nil {
		body, err = patchStripe(body, id, at, opts...)
	}
	if err != nil {
		panic("verifytest: " + err.Error())
	}
	return body
}

// patchStripe returns the Stripe event body with its ID set to id, its
// created time to at (unless at is zero) and opts applied, indented as
// Stripe delivers events: stripe.Provider.Sample's patch, and the fields
// only tests set. The same arguments give the same bytes.
func patchStripe(body []byte, id string, at time.Time, opts ...Option) ([]byte, error) {
	p := patch{sample: map[string]string{}}
	for _, opt := range opts {
		opt(&p)
	}
	sampled, err := stripe.Sender().Sample(sample.Event{Body: body, ID: id, Options: p.sample})
	if err != nil {
		return nil, fmt.Errorf("patch event: %w", err)
	}
	var ev map[string]any
	dec := json.NewDecoder(bytes.NewReader(sampled.Body))
	dec.UseNumber()
	if err := dec.Decode(&ev); err != nil {
		return nil, fmt.Errorf("patch event: %w", err)
	}
	data, _ := ev["data"].(map[string]any)
	obj, _ := data["object"].(map[string]any)
	if !at.IsZero() {
		ev["created"] = json.Number(strconv.FormatInt(at.Unix(), 10))
	}
	if p.apiVersion != "" {
		ev["api_version"] = p.apiVersion
	}
	if p.livemode != nil {
		ev["livemode"], obj["livemode"] = *p.livemode, *p.livemode
	}
	if p.payment != "" {
		obj["payment_status"] = p.payment
	}
	return pad(ev, obj, p.size)
}

// pad encodes ev with metadata keys on obj that bring it to size bytes.
func pad(ev, obj map[string]any, size int) ([]byte, error) {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	build := func(values []string) ([]byte, error) {
		for i, v := range values {
			md[fmt.Sprintf("padding_%05d", i)] = v
		}
		return encode(ev)
	}
	b, err := build(nil)
	if err != nil || size <= len(b) {
		return b, err
	}
	// Each padding key adds a fixed overhead plus its value; find how many
	// keys are needed, then share the remaining bytes among their values.
	one, err := build([]string{""})
	if err != nil {
		return nil, err
	}
	overhead := len(one) - len(b)
	keys := max(1, (size-len(b)+maxMetadataValue+overhead-1)/(maxMetadataValue+overhead))
	for {
		values := make([]string, keys)
		b, err := build(values)
		if err != nil {
			return nil, err
		}
		need := size - len(b)
		if need > keys*maxMetadataValue {
			keys++
			continue
		}
		for i := range values {
			n := min(max(need, 0), maxMetadataValue)
			values[i] = strings.Repeat("x", n)
			need -= n
		}
		return build(values)
	}
}

// setField returns body with the top-level key set to value.
func setField(body []byte, key string, value any) ([]byte, error) {
	var ev map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&ev); err != nil {
		return nil, err
	}
	ev[key] = value
	return encode(ev)
}

// encode returns v indented by two spaces, without HTML escaping, as Stripe
// delivers events.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

var (
	stripeOnce  sync.Once
	stripeFiles map[string][]byte
	stripeErr   error
)

// stripeFixtures reads testdata/stripe once (stripeDir).
func stripeFixtures() (map[string][]byte, error) {
	stripeOnce.Do(func() {
		var dir string
		if dir, stripeErr = stripeDir(); stripeErr != nil {
			return
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		stripeFiles = map[string][]byte{}
		for _, p := range paths {
			body, err := os.ReadFile(p)
			if err != nil {
				stripeErr = err
				return
			}
			stripeFiles[strings.TrimSuffix(filepath.Base(p), ".json")] = body
		}
	})
	return stripeFiles, stripeErr
}

// stripeDir returns the repository's testdata/stripe: found from this
// file's source path, else from the working directory and its parents.
func stripeDir() (string, error) {
	var dirs []string
	if _, file, _, ok := runtime.Caller(0); ok {
		dirs = append(dirs, filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "stripe"))
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			dirs = append(dirs, filepath.Join(d, "testdata", "stripe"))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, dir := range dirs {
		if paths, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(paths) > 0 {
			return dir, nil
		}
	}
	return "", errors.New("no testdata/stripe: run inside the hookinbox repository")
}

// StripePayloads returns every real Stripe delivery kept in the
// repository's testdata/stripe (one per event type) and
// testdata/stripe/variants (the same types in other shapes), with their
// paths below testdata/stripe as names, in a fixed order: the bodies the
// verifier's and the receiver's fuzzers start from.
func StripePayloads() (names []string, bodies [][]byte, err error) {
	dir, err := stripeDir()
	if err != nil {
		return nil, nil, err
	}
	return readPayloads(dir, "*.json", "variants/*.json")
}

// readPayloads reads the files below dir that match globs, in order, and
// names each by its path below dir.
func readPayloads(dir string, globs ...string) (names []string, bodies [][]byte, err error) {
	for _, glob := range globs {
		paths, _ := filepath.Glob(filepath.Join(dir, glob))
		for _, p := range paths {
			body, err := os.ReadFile(p)
			if err != nil {
				return nil, nil, err
			}
			rel, _ := filepath.Rel(dir, p)
			names, bodies = append(names, filepath.ToSlash(rel)), append(bodies, body)
		}
	}
	return names, bodies, nil
}

// StripeThinPayloads returns the thin event notifications kept in the
// repository's testdata/stripe/thin, shaped as Stripe documents them, with
// their paths below testdata/stripe as names, in a fixed order.
func StripeThinPayloads() (names []string, bodies [][]byte, err error) {
	dir, err := stripeDir()
	if err != nil {
		return nil, nil, err
	}
	return readPayloads(dir, "thin/*.json")
}

// StripeRelated is the related_object of a thin event notification.
type StripeRelated = stripe.Related

// StripeThin is stripe.Thin: a thin event notification of the thin type
// typ with this id, created at, about related, naming the snapshot event
// snapshot unless it is empty.
func StripeThin(typ, id string, at time.Time, related StripeRelated, snapshot string) []byte {
	return stripe.Thin(typ, id, at, related, snapshot)
}

// StripeVerify returns Stripe's verifier (stripe.Provider's) with
// secrets and the clock now (nil: the real one), as a check of one
// Stripe-Signature header value over a body. It panics on secrets the
// verifier refuses: a test's own mistake.
func StripeVerify(now func() time.Time, secrets ...string) func(header string, body []byte) (webhook.Event, error) {
	v, err := stripe.Provider{}.Verifier(secrets, &provider.Env{Now: now})
	if err != nil {
		panic(err)
	}
	return func(header string, body []byte) (webhook.Event, error) {
		evs, err := v.Verify(context.Background(), webhook.Request{Header: map[string]string{"stripe-signature": header}, Body: body})
		if err != nil {
			return webhook.Event{}, err
		}
		return evs[0], nil
	}
}

// Verifier returns p's verifier of deliveries signed with secrets, at
// the clock now (nil: the real one). It panics on secrets p refuses: a
// test's own mistake.
func Verifier(p provider.Provider, now func() time.Time, secrets ...string) provider.Verifier {
	v, err := p.Verifier(secrets, &provider.Env{Now: now})
	if err != nil {
		panic(err)
	}
	return v
}
