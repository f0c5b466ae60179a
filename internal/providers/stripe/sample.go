package stripe

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send Stripe's test deliveries: an event, or its
// thin notification (variant "thin"), signed in Stripe-Signature with
// every secret.
func Sender() sample.Sender {
	return sample.Sender{Provider: Provider{}, Sign: sign, Sample: sampleEvent,
		Variants: []sample.Flag{thin}, Options: sendOptions, Help: sendHelp, Examples: sendExamples}
}

// sign returns ev.Body, an event or a thin notification with its id,
// signed with every secret.
func sign(ev sample.Event, secrets []string, at time.Time) (webhook.Request, error) {
	if _, err := sample.FirstSecret(Name, secrets); err != nil {
		return webhook.Request{}, err
	}
	var head struct{ ID string }
	if err := json.Unmarshal(ev.Body, &head); err != nil || head.ID == "" {
		return webhook.Request{}, fmt.Errorf("stripe: the event is not JSON with an id")
	}
	return webhook.Request{Method: "POST", Header: headers(ev.Body, at, secrets...), Body: ev.Body}, nil
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `Stripe-Signature (t=<unix>,v1=<HMAC-SHA256 of "<t>.<body>">).
An event type (checkout.session.completed, invoice.paid, ...)
sends the real event of that type in hookinbox's testdata/stripe/
about objects of its own (a fresh invoice, session, customer or
subscription ID each run, unless --object, --customer or
--subscription names one), with the --email and --status given; a
path sends that file with those flags. Either way the event gets a
fresh evt_ ID unless --id is given (or, for a file, --keep-id).
--thin sends the event as a thin event notification (object
v2.core.event, type v1.<event type>, a related_object); it first
puts the v2 event and the object on the running stack's Stripe
stand-in, which the processor fetches them from.`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send stripe checkout.session.completed --times 3",
	"hookinbox send stripe checkout.session.completed --thin",
	"hookinbox send stripe customer.subscription.updated --subscription sub_123 --status past_due",
	"hookinbox send stripe testdata/stripe/invoice.paid.json",
}

// sendOptions are the values `hookinbox send stripe` takes
// (sample.Sender.Options); sampleEvent also takes any field of the object
// naming another object ("payment_intent", "latest_invoice", ...) and
// "session", a checkout session's id.
var sendOptions = []sample.Flag{
	{Name: "customer", Usage: "stripe: customer ID, cus_..."},
	{Name: "email", Usage: "stripe: the email address of every email field of the event's object (default the sample's)"},
	{Name: "subscription", Usage: "stripe: subscription ID, sub_...; on checkout.session.completed makes a subscription checkout"},
	{Name: "status", Usage: "stripe: subscription status: active, past_due, canceled, ..."},
	{Name: "object", Usage: "stripe: ID of the event's object (in_..., cs_..., sub_...; default a fresh one for an event type)"},
}

// thin is the variant that sends a thin event notification.
var thin = sample.Flag{Name: "thin", Usage: "stripe: send a thin event notification (needs a running hookinbox dev)"}

// sampleEvent is Stripe's Sample: the event with the id ev.ID (or a
// fresh evt_ one, unless ev.KeepID), retyped ev.Type when set, about the
// objects ev.Options name; when ev.Fresh, created now about a fresh
// object, customer, payment intent, charge, invoice and subscription.
// The "thin" variant is the event's thin notification, with the v2
// event and the object in API.
func sampleEvent(ev sample.Event) (sample.Event, error) {
	head, err := sampleHead(ev.Body)
	if err != nil {
		return ev, err
	}
	if ev.Options["status"] != "" && ev.Options["subscription"] == "" && !strings.HasPrefix(head.Type, "customer.subscription.") {
		return ev, errors.New("stripe: --status needs --subscription, or a customer.subscription.* event")
	}
	if ev.KeepID && ev.ID == "" && !ev.Fresh && ev.Variant == "" {
		ev.ID, ev.Type = head.ID, head.Type
		return ev, nil
	}
	var p patch
	var at time.Time // zero: a file keeps its created time
	if ev.Fresh {
		p, at = freshPatch(head.Data.Object), time.Now()
	}
	for k, v := range ev.Options {
		p.set(k, v)
	}
	if ev.Type != "" {
		p.typ = ev.Type
	}
	given, id := ev.ID, ev.ID
	if id == "" {
		id = "evt_" + sample.Token()
	}
	if ev.Body, err = p.apply(ev.Body, id, at); err != nil {
		return ev, err
	}
	ev.ID, ev.Type = id, head.Type
	if p.typ != "" {
		ev.Type = p.typ
	}
	if ev.Variant == thin.Name {
		return thinSample(ev, given)
	}
	return ev, nil
}

// thinSample returns the thin notification of the snapshot event ev: the
// v2 event id id (or a fresh one), type v1.<type>, created now, about the event's
// object, which API holds with the v2 event, as Stripe holds them
// before it notifies.
func thinSample(ev sample.Event, id string) (sample.Event, error) {
	head, err := sampleHead(ev.Body)
	if err != nil {
		return ev, err
	}
	var obj struct{ ID, Object string }
	if json.Unmarshal(head.Data.Object, &obj) != nil || obj.ID == "" || obj.Object == "" {
		return ev, errors.New("stripe: thin: the event has no data.object with an id and an object type")
	}
	rel := Related{ID: obj.ID, Type: obj.Object, URL: objectPath(obj.Object, obj.ID)}
	if id == "" {
		id = "evt_test_65" + sample.Token()
	}
	body := Thin("v1."+head.Type, id, time.Now(), rel, "")
	ev.ID, ev.Body = id, body
	ev.API = map[string][]byte{rel.URL: head.Data.Object, "/v2/core/events/" + id: body}
	return ev, nil
}

// eventHead is what sampleEvent reads of an event.
type eventHead struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// sampleHead reads body's eventHead.
func sampleHead(body []byte) (eventHead, error) {
	var head eventHead
	if err := json.Unmarshal(body, &head); err != nil || len(head.Data.Object) == 0 {
		return head, fmt.Errorf("stripe: not a Stripe event with a data.object: %v", err)
	}
	return head, nil
}

// objectPath is the API path of a v1 object: checkout.session cs_1 is
// /v1/checkout/sessions/cs_1, invoice in_1 /v1/invoices/in_1.
func objectPath(object, id string) string {
	parts := strings.Split(object, ".")
	parts[len(parts)-1] += "s"
	return "/v1/" + strings.Join(parts, "/") + "/" + id
}

// Related is the related_object of a thin event notification.
type Related struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Thin returns a thin event notification of the thin type typ
// ("v1.checkout.session.completed", "v2.core.account.created") with this
// id, created at, about related (no related_object when its URL is
// empty) and, when snapshot is not empty, naming the snapshot event of
// the same action (snapshot_event), as Stripe sends it during a
// snapshot-to-thin migration.
func Thin(typ, id string, at time.Time, related Related, snapshot string) []byte {
	ev := map[string]any{
		"id": id, "object": thinObject, "type": typ, "livemode": false,
		"created": at.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
	if related.URL != "" {
		ev["related_object"] = related
	}
	if snapshot != "" {
		ev["snapshot_event"] = snapshot
	}
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err) // strings, a bool and a struct of strings
	}
	return b
}

// patch is what sampleEvent changes in an event.
type patch struct {
	typ, object, session, customer, email, subscription, status string
	related                                                     [][2]string // field, new ID
}

// set sets the option name: a field of patch, or else a field of the
// object naming another object.
func (p *patch) set(name, value string) {
	if value == "" {
		return
	}
	switch name {
	case "object":
		p.object = value
	case "session":
		p.session = value
	case "customer":
		p.customer = value
	case "email":
		p.email = value
	case "subscription":
		p.subscription = value
	case "status":
		p.status = value
	default:
		p.related = append(p.related, [2]string{name, value})
	}
}

// freshPatch gives the object a fresh ID, and the customer, payment
// intent, charge, invoice and subscription it names (the same prefix, new
// letters), as a new event about a new object has in a real account.
func freshPatch(raw json.RawMessage) patch {
	var obj map[string]any
	_ = json.Unmarshal(raw, &obj)
	var p patch
	if id, _ := obj["id"].(string); id != "" && obj["object"] == "customer" {
		p.customer = sample.FreshID(id)
	} else if id != "" {
		p.object = sample.FreshID(id)
	}
	if id, _ := obj["customer"].(string); id != "" {
		p.customer = sample.FreshID(id)
	}
	for _, field := range []string{"payment_intent", "charge", "latest_charge", "latest_invoice"} {
		if id, _ := obj[field].(string); id != "" {
			p.related = append(p.related, [2]string{field, sample.FreshID(id)})
		}
	}
	if id, _ := obj["subscription"].(string); id != "" {
		p.subscription = sample.FreshID(id)
	}
	return p
}

// apply returns the event body with its ID set to id, its created time
// to at (unless at is zero) and p applied, indented as Stripe delivers
// events. The same arguments give the same bytes.
func (p patch) apply(body []byte, id string, at time.Time) ([]byte, error) {
	ev, data, obj, err := decodeEvent(body)
	if err != nil {
		return nil, err
	}
	ev["id"] = id
	if p.typ != "" {
		ev["type"] = p.typ
	}
	if !at.IsZero() {
		ev["created"] = json.Number(strconv.FormatInt(at.Unix(), 10))
	}
	// replace changes every occurrence of the string old in the object.
	replace := func(old, id string) {
		if old != "" && id != "" {
			data["object"] = replaceString(obj, old, id)
			obj = data["object"].(map[string]any)
		}
	}
	if old, _ := obj["id"].(string); p.object != "" {
		replace(old, p.object)
	}
	for _, r := range p.related {
		old, _ := obj[r[0]].(string)
		replace(old, r[1])
	}
	if obj["object"] == "customer" {
		old, _ := obj["id"].(string)
		replace(old, p.customer)
	} else if old, ok := obj["customer"].(string); ok {
		replace(old, p.customer)
	}
	if old, ok := obj["id"].(string); ok && obj["object"] == "checkout.session" && (p.session != "" || p.object == "") {
		session := p.session
		if session == "" {
			session = "cs_test_" + strings.TrimPrefix(id, "evt_")
		}
		replace(old, session)
	}
	if p.email != "" {
		setEmails(obj, p.email)
	}
	if p.subscription != "" {
		switch obj["object"] {
		case "checkout.session":
			obj["mode"], obj["subscription"] = "subscription", p.subscription
		case "subscription":
			replace(obj["id"].(string), p.subscription)
		default:
			old, _ := obj["subscription"].(string)
			replace(old, p.subscription)
		}
	}
	if p.status != "" && obj["object"] == "subscription" {
		obj["status"] = p.status
	}
	return encode(ev)
}

// decodeEvent decodes an event, its numbers as written, and returns it
// with its data and data.object.
func decodeEvent(body []byte) (ev, data, obj map[string]any, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&ev); err != nil {
		return nil, nil, nil, fmt.Errorf("stripe: patch event: %w", err)
	}
	data, _ = ev["data"].(map[string]any)
	obj, _ = data["object"].(map[string]any)
	if obj == nil {
		return nil, nil, nil, errors.New("stripe: patch event: no data.object")
	}
	return ev, data, obj, nil
}

// setEmails sets every email address of v to email: each string whose
// key names an email (customer_email, receipt_email,
// billing_details.email, ...), as provider.Emails finds the people an
// event is about. A field with no address (null) stays empty.
func setEmails(v any, email string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && s != "" && strings.Contains(strings.ToLower(k), "email") {
				v[k] = email
				continue
			}
			setEmails(e, email)
		}
	case []any:
		for _, e := range v {
			setEmails(e, email)
		}
	}
}

// replaceString returns v with every string equal to old replaced by repl,
// so an ID changes everywhere the object mentions it.
func replaceString(v any, old, repl string) any {
	switch v := v.(type) {
	case string:
		if v == old {
			return repl
		}
	case map[string]any:
		for k, e := range v {
			v[k] = replaceString(e, old, repl)
		}
	case []any:
		for i, e := range v {
			v[i] = replaceString(e, old, repl)
		}
	}
	return v
}

// encode returns v indented by two spaces, without HTML escaping, as
// Stripe delivers events.
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

// SignatureHeader returns the Stripe-Signature header value Stripe sends
// with body signed at at: "t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>">",
// with one v1 per secret, in order, as Stripe does while a secret is being
// rolled. With no secret it returns "t=<unix>" alone.
func SignatureHeader(body []byte, at time.Time, secrets ...string) string {
	t := strconv.FormatInt(at.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + t)
	for _, secret := range secrets {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(t + "."))
		m.Write(body)
		b.WriteString(",v1=" + hex.EncodeToString(m.Sum(nil)))
	}
	return b.String()
}

// headers returns the headers Stripe sends body with, signed at at with
// every secret. Names are lower case, as API Gateway gives them.
func headers(body []byte, at time.Time, secrets ...string) map[string]string {
	return map[string]string{
		"content-type":     "application/json; charset=utf-8",
		"user-agent":       "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
		"stripe-signature": SignatureHeader(body, at, secrets...),
	}
}
