package verifytest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// StripeAPIVersion is the api_version StripeEvent writes unless told
// otherwise: the version stripe-go v76 pins.
const StripeAPIVersion = "2023-10-16"

// maxMetadataValue is the longest metadata value Stripe stores.
const maxMetadataValue = 500

// Option adjusts the event StripeEvent builds.
type Option func(*eventOptions)

type eventOptions struct {
	customer     string
	email        string
	subscription string
	status       string
	price        string
	apiVersion   string
	livemode     bool
	metadata     map[string]string
	size         int
	payment      string
}

// WithCustomer sets the customer ID ("cus_...") the object belongs to.
func WithCustomer(id string) Option { return func(o *eventOptions) { o.customer = id } }

// WithEmail sets the customer's email (checkout.session
// customer_details.email, customer email).
func WithEmail(addr string) Option { return func(o *eventOptions) { o.email = addr } }

// WithSubscription sets the subscription ID ("sub_...") and its status
// ("active", "past_due", "canceled", ...). On checkout.session.completed it
// also makes the session a mode "subscription" one; an empty status keeps
// the type's default.
func WithSubscription(id, status string) Option {
	return func(o *eventOptions) { o.subscription, o.status = id, status }
}

// WithPaymentStatus sets a checkout session's payment_status: "paid"
// (the default), "unpaid" (a delayed payment method, settled later by
// checkout.session.async_payment_succeeded) or "no_payment_required".
func WithPaymentStatus(status string) Option { return func(o *eventOptions) { o.payment = status } }

// WithPrice sets the price ID ("price_...") of a subscription's first item.
func WithPrice(id string) Option { return func(o *eventOptions) { o.price = id } }

// WithMetadata adds one key to the object's metadata.
func WithMetadata(key, value string) Option {
	return func(o *eventOptions) {
		if o.metadata == nil {
			o.metadata = map[string]string{}
		}
		o.metadata[key] = value
	}
}

// WithAPIVersion sets the event's api_version, e.g. one that differs from
// the version stripe-go expects.
func WithAPIVersion(v string) Option { return func(o *eventOptions) { o.apiVersion = v } }

// WithLivemode marks the event and its object as live-mode ones.
func WithLivemode(live bool) Option { return func(o *eventOptions) { o.livemode = live } }

// WithSize pads the object's metadata, in keys of at most 500 bytes as
// Stripe allows, so the event is n bytes long: exactly, unless n is less
// than the unpadded event or only a few bytes more.
func WithSize(n int) Option { return func(o *eventOptions) { o.size = n } }

// StripeEvent returns a Stripe event of type typ and ID id, created at
// at.Unix(), shaped and indented as Stripe delivers it for api_version
// 2023-10-16, with a data.object fitting the type:
//
//   - checkout.session.*: a checkout.session "cs_..." with customer,
//     customer_details.email, amount_total 2000 usd, payment_status "paid",
//     status "complete", metadata, and mode "payment" (with a
//     payment_intent) or, given WithSubscription, "subscription" (with the
//     subscription and an invoice);
//   - customer.subscription.*: a subscription "sub_..." with customer,
//     status ("active", or "canceled" for .deleted), current_period_start
//     and _end, and items.data[0].price.id; .updated events also carry
//     data.previous_attributes;
//   - any other type: a minimal object named after the type's prefix
//     (invoice.paid → an "invoice") with id, customer and metadata.
//
// IDs the options do not set are derived from id, so two events with
// different ids describe different objects and the same arguments always
// give the same bytes.
func StripeEvent(typ, id string, at time.Time, opts ...Option) []byte {
	o := eventOptions{apiVersion: StripeAPIVersion}
	for _, opt := range opts {
		opt(&o)
	}
	g := stripeIDs{seed: id, live: o.livemode}
	if o.customer == "" {
		o.customer = g.id("cus", 14)
	}
	if o.email == "" {
		o.email = "jenny.rosen@example.com"
	}
	if o.price == "" {
		o.price = g.id("price", 24)
	}

	build := func(pad []string) []byte {
		e := stripeEvent{typ: typ, id: id, at: at, o: o, g: g, pad: pad}
		return encode(e.event())
	}
	b := build(nil)
	if o.size <= len(b) {
		return b
	}
	// Each padding key adds a fixed overhead plus its value; find how many
	// keys are needed, then share the remaining bytes among their values.
	overhead := len(build([]string{""})) - len(b)
	keys := max(1, (o.size-len(b)+maxMetadataValue+overhead-1)/(maxMetadataValue+overhead))
	for {
		pad := make([]string, keys)
		need := o.size - len(build(pad))
		if need > keys*maxMetadataValue {
			keys++
			continue
		}
		for i := range pad {
			n := min(max(need, 0), maxMetadataValue)
			pad[i] = strings.Repeat("x", n)
			need -= n
		}
		return build(pad)
	}
}

// SignStripe returns the Stripe-Signature header value Stripe sends with
// body signed at at: "t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>">",
// with one v1 per secret, in order, as Stripe does while a secret is being
// rolled. With no secret it returns "t=<unix>" alone.
func SignStripe(body []byte, at time.Time, secrets ...string) string {
	t := strconv.FormatInt(at.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + t)
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(t + "."))
		mac.Write(body)
		b.WriteString(",v1=" + hex.EncodeToString(mac.Sum(nil)))
	}
	return b.String()
}

// stripeEvent assembles one event.
type stripeEvent struct {
	typ, id string
	at      time.Time
	o       eventOptions
	g       stripeIDs
	pad     []string
}

func (e stripeEvent) event() object {
	data := object{{"object", e.object()}}
	if prev := e.previousAttributes(); prev != nil {
		data = append(data, field{"previous_attributes", prev})
	}
	return object{
		{"id", e.id},
		{"object", "event"},
		{"api_version", e.o.apiVersion},
		{"created", e.at.Unix()},
		{"data", data},
		{"livemode", e.o.livemode},
		{"pending_webhooks", 1},
		{"request", object{{"id", nil}, {"idempotency_key", nil}}},
		{"type", e.typ},
	}
}

func (e stripeEvent) object() object {
	switch {
	case strings.HasPrefix(e.typ, "checkout.session."):
		return e.checkoutSession()
	case strings.HasPrefix(e.typ, "customer.subscription."):
		return e.subscription()
	default:
		name := e.typ
		if i := strings.LastIndex(name, "."); i >= 0 {
			name = name[:i]
		}
		obj := object{
			{"id", e.g.id(stripeIDPrefix(name), 24)},
			{"object", name},
			{"created", e.at.Unix()},
		}
		if name == "customer" {
			obj = append(obj, field{"email", e.o.email})
		} else {
			obj = append(obj, field{"customer", e.o.customer})
		}
		return append(obj, field{"livemode", e.o.livemode}, field{"metadata", e.metadata()})
	}
}

// paymentStatus is the session's payment_status: WithPaymentStatus, else
// "paid".
func (e stripeEvent) paymentStatus() string {
	if e.o.payment != "" {
		return e.o.payment
	}
	return "paid"
}

func (e stripeEvent) checkoutSession() object {
	created := e.at.Add(-2 * time.Minute).Unix()
	mode, sub, invoice, paymentIntent, customerCreation := "payment", any(nil), any(nil), any(e.g.id("pi", 24)), any("always")
	var invoiceCreation any = object{{"enabled", false}, {"invoice_data", object{
		{"account_tax_ids", nil}, {"custom_fields", nil}, {"description", nil}, {"footer", nil},
		{"metadata", object{}}, {"rendering_options", nil},
	}}}
	if e.o.subscription != "" {
		mode, sub, invoice, paymentIntent, customerCreation, invoiceCreation = "subscription", e.o.subscription, e.g.id("in", 24), nil, nil, nil
	}
	idPrefix := "cs_test_a1"
	if e.o.livemode {
		idPrefix = "cs_live_a1"
	}
	return object{
		{"id", idPrefix + e.g.token("cs", 56)},
		{"object", "checkout.session"},
		{"after_expiration", nil},
		{"allow_promotion_codes", nil},
		{"amount_subtotal", 2000},
		{"amount_total", 2000},
		{"automatic_tax", object{{"enabled", false}, {"status", nil}}},
		{"billing_address_collection", nil},
		{"cancel_url", "https://example.com/cancel"},
		{"client_reference_id", nil},
		{"client_secret", nil},
		{"consent", nil},
		{"consent_collection", nil},
		{"created", created},
		{"currency", "usd"},
		{"currency_conversion", nil},
		{"custom_fields", []any{}},
		{"custom_text", object{{"after_submit", nil}, {"shipping_address", nil}, {"submit", nil}, {"terms_of_service_acceptance", nil}}},
		{"customer", e.o.customer},
		{"customer_creation", customerCreation},
		{"customer_details", object{
			{"address", object{{"city", nil}, {"country", "US"}, {"line1", nil}, {"line2", nil}, {"postal_code", "94103"}, {"state", nil}}},
			{"email", e.o.email},
			{"name", "Jenny Rosen"},
			{"phone", nil},
			{"tax_exempt", "none"},
			{"tax_ids", []any{}},
		}},
		{"customer_email", nil},
		{"expires_at", created + 24*60*60},
		{"invoice", invoice},
		{"invoice_creation", invoiceCreation},
		{"livemode", e.o.livemode},
		{"locale", nil},
		{"metadata", e.metadata()},
		{"mode", mode},
		{"payment_intent", paymentIntent},
		{"payment_link", nil},
		{"payment_method_collection", "always"},
		{"payment_method_configuration_details", nil},
		{"payment_method_options", object{}},
		{"payment_method_types", []any{"card"}},
		{"payment_status", e.paymentStatus()},
		{"phone_number_collection", object{{"enabled", false}}},
		{"recovered_from", nil},
		{"setup_intent", nil},
		{"shipping_address_collection", nil},
		{"shipping_cost", nil},
		{"shipping_details", nil},
		{"shipping_options", []any{}},
		{"status", "complete"},
		{"submit_type", nil},
		{"subscription", sub},
		{"success_url", "https://example.com/success"},
		{"total_details", object{{"amount_discount", 0}, {"amount_shipping", 0}, {"amount_tax", 0}}},
		{"ui_mode", "hosted"},
		{"url", nil},
	}
}

func (e stripeEvent) subscriptionTimes() (created, start, end time.Time) {
	if e.typ == "customer.subscription.created" {
		created = e.at.Add(-2 * time.Second)
		return created, created, created.AddDate(0, 1, 0)
	}
	// An update or deletion is of a subscription a few months old, in its
	// current period.
	created = e.at.AddDate(0, -3, -1)
	start = created.AddDate(0, 3, 0)
	return created, start, start.AddDate(0, 1, 0)
}

func (e stripeEvent) subscription() object {
	id := e.o.subscription
	if id == "" {
		id = e.g.id("sub", 24)
	}
	status := e.o.status
	if status == "" {
		status = "active"
		if e.typ == "customer.subscription.deleted" {
			status = "canceled"
		}
	}
	created, start, end := e.subscriptionTimes()
	canceledAt, endedAt, reason := any(nil), any(nil), any(nil)
	if status == "canceled" {
		canceledAt, endedAt, reason = e.at.Unix(), e.at.Unix(), "cancellation_requested"
	}
	product := e.g.id("prod", 14)
	price := object{
		{"id", e.o.price},
		{"object", "price"},
		{"active", true},
		{"billing_scheme", "per_unit"},
		{"created", created.AddDate(0, -1, 0).Unix()},
		{"currency", "usd"},
		{"custom_unit_amount", nil},
		{"livemode", e.o.livemode},
		{"lookup_key", nil},
		{"metadata", object{}},
		{"nickname", nil},
		{"product", product},
		{"recurring", object{{"aggregate_usage", nil}, {"interval", "month"}, {"interval_count", 1}, {"trial_period_days", nil}, {"usage_type", "licensed"}}},
		{"tax_behavior", "unspecified"},
		{"tiers_mode", nil},
		{"transform_quantity", nil},
		{"type", "recurring"},
		{"unit_amount", 2000},
		{"unit_amount_decimal", "2000"},
	}
	// The legacy plan mirrors the price; Stripe still sends both.
	plan := object{
		{"id", e.o.price},
		{"object", "plan"},
		{"active", true},
		{"aggregate_usage", nil},
		{"amount", 2000},
		{"amount_decimal", "2000"},
		{"billing_scheme", "per_unit"},
		{"created", created.AddDate(0, -1, 0).Unix()},
		{"currency", "usd"},
		{"interval", "month"},
		{"interval_count", 1},
		{"livemode", e.o.livemode},
		{"metadata", object{}},
		{"nickname", nil},
		{"product", product},
		{"tiers_mode", nil},
		{"transform_usage", nil},
		{"trial_period_days", nil},
		{"usage_type", "licensed"},
	}
	item := object{
		{"id", e.g.id("si", 14)},
		{"object", "subscription_item"},
		{"billing_thresholds", nil},
		{"created", created.Unix() + 1},
		{"metadata", object{}},
		{"plan", plan},
		{"price", price},
		{"quantity", 1},
		{"subscription", id},
		{"tax_rates", []any{}},
	}
	return object{
		{"id", id},
		{"object", "subscription"},
		{"application", nil},
		{"application_fee_percent", nil},
		{"automatic_tax", object{{"enabled", false}}},
		{"billing_cycle_anchor", created.Unix()},
		{"billing_cycle_anchor_config", nil},
		{"billing_thresholds", nil},
		{"cancel_at", nil},
		{"cancel_at_period_end", false},
		{"canceled_at", canceledAt},
		{"cancellation_details", object{{"comment", nil}, {"feedback", nil}, {"reason", reason}}},
		{"collection_method", "charge_automatically"},
		{"created", created.Unix()},
		{"currency", "usd"},
		{"current_period_end", end.Unix()},
		{"current_period_start", start.Unix()},
		{"customer", e.o.customer},
		{"days_until_due", nil},
		{"default_payment_method", e.g.id("pm", 24)},
		{"default_source", nil},
		{"default_tax_rates", []any{}},
		{"description", nil},
		{"discount", nil},
		{"ended_at", endedAt},
		{"items", object{
			{"object", "list"},
			{"data", []any{item}},
			{"has_more", false},
			{"total_count", 1},
			{"url", "/v1/subscription_items?subscription=" + id},
		}},
		{"latest_invoice", e.g.id("in", 24)},
		{"livemode", e.o.livemode},
		{"metadata", e.metadata()},
		{"next_pending_invoice_item_invoice", nil},
		{"on_behalf_of", nil},
		{"pause_collection", nil},
		{"payment_settings", object{{"payment_method_options", nil}, {"payment_method_types", nil}, {"save_default_payment_method", "off"}}},
		{"pending_invoice_item_interval", nil},
		{"pending_setup_intent", nil},
		{"pending_update", nil},
		{"plan", plan},
		{"quantity", 1},
		{"schedule", nil},
		{"start_date", created.Unix()},
		{"status", status},
		{"test_clock", nil},
		{"transfer_data", nil},
		{"trial_end", nil},
		{"trial_settings", object{{"end_behavior", object{{"missing_payment_method", "create_invoice"}}}}},
		{"trial_start", nil},
	}
}

// previousAttributes returns what an .updated event says changed: for a
// subscription, a renewal into the current period.
func (e stripeEvent) previousAttributes() any {
	if e.typ != "customer.subscription.updated" {
		return nil
	}
	_, start, _ := e.subscriptionTimes()
	return object{
		{"current_period_end", start.Unix()},
		{"current_period_start", start.AddDate(0, -1, 0).Unix()},
		{"latest_invoice", e.g.id("in", 24) + "0"},
	}
}

// metadata returns the options' metadata in key order, then the padding.
func (e stripeEvent) metadata() object {
	md := object{}
	for _, k := range slices.Sorted(maps.Keys(e.o.metadata)) {
		md = append(md, field{k, e.o.metadata[k]})
	}
	for i, v := range e.pad {
		md = append(md, field{fmt.Sprintf("padding_%05d", i), v})
	}
	return md
}

// stripeIDPrefix returns Stripe's ID prefix for objects named name.
func stripeIDPrefix(name string) string {
	switch name {
	case "invoice":
		return "in"
	case "payment_intent":
		return "pi"
	case "charge":
		return "ch"
	case "customer":
		return "cus"
	case "invoiceitem":
		return "ii"
	case "payment_method":
		return "pm"
	case "product":
		return "prod"
	case "price":
		return "price"
	case "refund":
		return "re"
	case "setup_intent":
		return "seti"
	}
	return "obj"
}

// stripeIDs derives Stripe-looking IDs from a seed, so different events get
// different objects and the same event the same ones.
type stripeIDs struct {
	seed string
	live bool
}

// id returns "<prefix>_<n base-62 characters>".
func (g stripeIDs) id(prefix string, n int) string { return prefix + "_" + g.token(prefix, n) }

// token returns n base-62 characters drawn from the seed and kind.
func (g stripeIDs) token(kind string, n int) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	out := make([]byte, 0, n)
	for block := 0; len(out) < n; block++ {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%t/%d", g.seed, kind, g.live, block)))
		for _, c := range sum {
			if len(out) == n {
				break
			}
			out = append(out, alphabet[int(c)%len(alphabet)])
		}
	}
	return string(out)
}

// object is a JSON object that keeps its keys in the order given, as
// Stripe's responses do.
type object []field

type field struct {
	key   string
	value any
}

// MarshalJSON writes the fields in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, as Stripe writes JSON.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// encode returns v indented by two spaces, as Stripe delivers events.
func encode(v object) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("verifytest: encode event: %v", err)) // only strings, numbers, bools and nils: cannot fail
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
