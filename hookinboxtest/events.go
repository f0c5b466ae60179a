package hookinboxtest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/adyen"
	"github.com/hookinbox/hookinbox/provider/github"
	"github.com/hookinbox/hookinbox/provider/gopay"
	"github.com/hookinbox/hookinbox/provider/mollie"
	"github.com/hookinbox/hookinbox/provider/paddle"
	"github.com/hookinbox/hookinbox/provider/shopify"
	"github.com/hookinbox/hookinbox/provider/standard"
	"github.com/hookinbox/hookinbox/provider/stripe"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/stripeevent"
	"github.com/hookinbox/hookinbox/webhook"
)

// Event is one event a provider delivers: Deliver signs it as the
// provider does and hands it to the receiver. The constructors (Stripe,
// Shopify, GitHub, Standard, Adyen, GoPay, Paddle, Mollie) start from
// hookinbox's realistic fixtures (testdata/<provider>/) and give each
// event fresh IDs, so no two events share an event, an order, a session
// or a payment.
// StripeThin is a Stripe thin event notification.
type Event struct {
	// Provider is the receiver's name of the provider: one of
	// hookinbox's, or one of your own (Options.Providers).
	Provider string
	// ID is the event's part of its inbox key: the Stripe event ID, the
	// X-Shopify-Event-Id, X-GitHub-Delivery or webhook-id header, Adyen's
	// "<pspReference>-<eventCode>", the GoPay or Mollie payment ID, or
	// Paddle's event_id.
	ID string
	// Type is the event type the business sees (webhook.Event.Type).
	Type string
	// Body is the payload as the provider sends it; for GoPay and Mollie,
	// which notify with the payment ID only, the payment their API serves.
	Body []byte

	// A Stripe thin event's related object, as the Stripe stand-in
	// serves it at objectPath.
	objectPath string
	object     []byte
}

// Key returns the event's inbox key, "<provider>#<id>".
func (e Event) Key() webhook.Key { return webhook.NewKey(e.Provider, e.ID) }

// Stripe returns the snapshot event of type typ (StripeEvent) with a fresh
// event ID.
func Stripe(t testing.TB, typ string) Event {
	t.Helper()
	id := stripeevent.NewID()
	return Event{Provider: stripe.Name, ID: id, Type: typ, Body: stripeBody(t, typ, id)}
}

// StripeThin returns the thin event notification of the event type typ
// ("checkout.session.completed", ...): a v2 event v1.<typ> about the
// object of StripeEvent's fixture of typ, with fresh IDs. Deliver first
// puts the v2 event and the object on the Stripe stand-in, as Stripe
// holds them before it notifies; the processor fetches both, and the
// business sees the event as a snapshot event of type typ with the object
// as it is now.
func StripeThin(t testing.TB, typ string) Event {
	t.Helper()
	var snap struct {
		Data struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	var obj struct{ ID, Object string }
	if err := json.Unmarshal(stripeBody(t, typ, stripeevent.NewID()), &snap); err != nil || json.Unmarshal(snap.Data.Object, &obj) != nil || obj.ID == "" {
		t.Fatalf("hookinboxtest: stripe %s fixture has no object with an id", typ)
	}
	parts := strings.Split(obj.Object, ".")
	parts[len(parts)-1] += "s"
	path := "/v1/" + strings.Join(parts, "/") + "/" + obj.ID
	id := "evt_test_65" + token(t)
	body := verifytest.StripeThin("v1."+typ, id, time.Now(), verifytest.StripeRelated{ID: obj.ID, Type: obj.Object, URL: path}, "")
	return Event{Provider: stripe.Name, ID: id, Type: typ, Body: body, objectPath: path, object: snap.Data.Object}
}

// Shopify returns the order webhook of topic ("orders/create",
// "orders/paid", "orders/updated") with a fresh event ID and order ID.
func Shopify(t testing.TB, topic string) Event {
	t.Helper()
	raw := fixture(t, "shopify", strings.ReplaceAll(topic, "/", "_")+".json")
	var order struct {
		ID json.Number `json:"id"`
	}
	if err := json.Unmarshal(raw, &order); err != nil || order.ID == "" {
		t.Fatalf("hookinboxtest: shopify %s fixture has no order id", topic)
	}
	raw = bytes.ReplaceAll(raw, []byte(order.ID.String()), []byte(digits(t, 18)))
	return Event{Provider: shopify.Name, ID: uuid(t), Type: topic, Body: raw}
}

// GitHub returns the webhook of event ("issues", "ping") with a fresh
// delivery ID.
func GitHub(t testing.TB, event string) Event {
	t.Helper()
	return Event{Provider: github.Name, ID: uuid(t), Type: event, Body: fixture(t, "github", event+".json")}
}

// Standard returns the Standard Webhooks message of type typ
// ("invoice.paid") with a fresh message ID and data.id.
func Standard(t testing.TB, typ string) Event {
	t.Helper()
	raw := fixture(t, "standard", typ+".json")
	var msg struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("hookinboxtest: standard %s fixture: %v", typ, err)
	}
	if msg.Data.ID != "" {
		prefix, _, _ := strings.Cut(msg.Data.ID, "_")
		raw = bytes.ReplaceAll(raw, []byte(strconv.Quote(msg.Data.ID)), []byte(strconv.Quote(prefix+"_"+token(t))))
	}
	return Event{Provider: standard.Name, ID: "msg_" + token(t), Type: typ, Body: raw}
}

// Adyen returns the standard notification of one item of eventCode
// ("AUTHORISATION", "REFUND") with a fresh pspReference.
func Adyen(t testing.TB, eventCode string) Event {
	t.Helper()
	raw := fixture(t, "adyen", eventCode+".json")
	var n struct {
		Items []struct {
			Item struct{ PspReference, EventCode string } `json:"NotificationRequestItem"`
		} `json:"notificationItems"`
	}
	if err := json.Unmarshal(raw, &n); err != nil || len(n.Items) != 1 {
		t.Fatalf("hookinboxtest: adyen %s fixture is not a notification of one item", eventCode)
	}
	psp := digits(t, 16)
	raw = bytes.ReplaceAll(raw, []byte(strconv.Quote(n.Items[0].Item.PspReference)), []byte(strconv.Quote(psp)))
	return Event{Provider: adyen.Name, ID: psp + "-" + n.Items[0].Item.EventCode, Type: n.Items[0].Item.EventCode, Body: raw}
}

// GoPay returns a payment notification for a payment in state ("PAID",
// "REFUNDED") with a fresh payment ID: Deliver sets the payment on the
// GoPay stand-in, as GoPay's state changes before it notifies, and the
// processor fetches it from there.
func GoPay(t testing.TB, state string) Event {
	t.Helper()
	raw := fixture(t, "gopay", "payment."+state+".json")
	var p standin.GoPayPayment
	if err := json.Unmarshal(raw, &p); err != nil || p.ID == 0 {
		t.Fatalf("hookinboxtest: gopay %s fixture is not a payment", state)
	}
	id := "3" + digits(t, 9)
	raw = bytes.ReplaceAll(raw, []byte(strconv.FormatInt(p.ID, 10)), []byte(id))
	return Event{Provider: gopay.Name, ID: id, Type: gopay.Notification, Body: raw}
}

// Paddle returns a Paddle Billing event of type typ (a file under
// testdata/paddle/: "transaction.completed") with a fresh event_id and
// transaction id.
func Paddle(t testing.TB, typ string) Event {
	t.Helper()
	raw := fixture(t, "paddle", typ+".json")
	var ev struct {
		EventID string `json:"event_id"`
		Data    struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil || ev.EventID == "" {
		t.Fatalf("hookinboxtest: paddle %s fixture is not an event", typ)
	}
	id := "evt_" + strings.ToLower(token(t))
	raw = bytes.ReplaceAll(raw, []byte(strconv.Quote(ev.EventID)), []byte(strconv.Quote(id)))
	if obj := ev.Data.ID; obj != "" {
		prefix := obj[:strings.LastIndex(obj, "_")+1]
		raw = bytes.ReplaceAll(raw, []byte(strconv.Quote(obj)), []byte(strconv.Quote(prefix+strings.ToLower(token(t)))))
	}
	return Event{Provider: paddle.Name, ID: id, Type: typ, Body: raw}
}

// Mollie returns a payment notification for a payment in status ("paid",
// "open", "failed", ...) with a fresh payment ID: Deliver sets the payment
// on the Mollie stand-in, as Mollie's state changes before it notifies,
// and the processor fetches it from there.
func Mollie(t testing.TB, status string) Event {
	t.Helper()
	raw := fixture(t, "mollie", "payment.paid.json")
	var p standin.MolliePayment
	if err := json.Unmarshal(raw, &p); err != nil || p.ID == "" {
		t.Fatal("hookinboxtest: the mollie fixture is not a payment")
	}
	id := "tr_" + token(t)[:10]
	raw = bytes.ReplaceAll(raw, []byte(p.ID), []byte(id))
	raw = bytes.Replace(raw, []byte(`"status": "paid"`), []byte(`"status": `+strconv.Quote(status)), 1)
	return Event{Provider: mollie.Name, ID: id, Type: status, Body: raw}
}

// Deliver signs ev now with the local secrets, as its provider signs
// (provider.Provider.Sign, your own providers' too), hands it to the
// receiver as API Gateway would, and returns the receiver's answer:
// "accepted" or "duplicate" ("[accepted]" for Adyen, which wants that
// answer for both). Any answer but 200 fails the test.
func (p *Pipeline) Deliver(t testing.TB, ev Event) string {
	t.Helper()
	req, err := p.request(ev, time.Now())
	if err != nil {
		t.Fatalf("hookinboxtest: %s: %v", ev.Key(), err)
	}
	resp := p.p.Send(t, req)
	if resp.StatusCode != 200 {
		t.Fatalf("hookinboxtest: the receiver answered %s with %d %s", ev.Key(), resp.StatusCode, resp.Body)
	}
	var out struct{ Status string }
	if json.Unmarshal([]byte(resp.Body), &out) == nil && out.Status != "" {
		return out.Status
	}
	return resp.Body
}

// request returns the API Gateway request of ev's delivery at at, signed
// by its provider with the secret the receiver holds.
func (p *Pipeline) request(ev Event, at time.Time) (events.APIGatewayV2HTTPRequest, error) {
	pr, ok := p.reg.Lookup(ev.Provider)
	if !ok {
		return events.APIGatewayV2HTTPRequest{}, fmt.Errorf("hookinboxtest cannot deliver %q events: no such provider (Options.Providers)", ev.Provider)
	}
	if ev.object != nil {
		// A thin event: the stand-in holds the v2 event and its object.
		if err := p.p.Stack.Stripe.AddThinEvent(ev.Body); err != nil {
			return events.APIGatewayV2HTTPRequest{}, err
		}
		p.p.Stack.Stripe.SetObject(ev.objectPath, ev.object)
	}
	return p.p.Stack.Signed(pr, provider.TestEvent{ID: ev.ID, Type: ev.Type, Body: ev.Body}, at)
}

// stripeBody is StripeEvent: the fixture of typ with the event ID id and
// fresh IDs for its object and customer.
func stripeBody(t testing.TB, typ, id string) []byte {
	t.Helper()
	raw, err := verifytest.StripeFixture(typ)
	if err != nil {
		t.Fatalf("hookinboxtest: %v", err)
	}
	var ev struct {
		Data struct {
			Object struct {
				ID       string          `json:"id"`
				Customer json.RawMessage `json:"customer"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("hookinboxtest: stripe %s fixture: %v", typ, err)
	}
	if obj := ev.Data.Object.ID; obj != "" {
		prefix := obj[:strings.LastIndex(obj, "_")+1]
		raw = bytes.ReplaceAll(raw, []byte(strconv.Quote(obj)), []byte(strconv.Quote(prefix+token(t))))
	}
	var opts []verifytest.Option
	var customer string
	if json.Unmarshal(ev.Data.Object.Customer, &customer) == nil && customer != "" {
		opts = append(opts, verifytest.WithCustomer("cus_"+token(t)[:14]))
	}
	raw, err = verifytest.PatchStripe(raw, id, time.Time{}, opts...)
	if err != nil {
		t.Fatalf("hookinboxtest: %v", err)
	}
	return raw
}

// fixture reads hookinbox's testdata/<dir>/<name>.
func fixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	root, err := devstack.RepoRoot("")
	if err == nil {
		var raw []byte
		if raw, err = os.ReadFile(filepath.Join(root, "testdata", dir, name)); err == nil {
			return raw
		}
	}
	t.Fatalf("hookinboxtest: no %s fixture %s: %v", dir, name, err)
	return nil
}

// token returns 24 random letters and digits, as in Stripe's IDs.
func token(t testing.TB) string {
	t.Helper()
	return strings.TrimPrefix(stripeevent.NewID(), "evt_")
}

// digits returns n random decimal digits, the first not 0.
func digits(t testing.TB, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		d, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && d.Int64() == 0 {
			d.SetInt64(7)
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// uuid returns a random version-4 UUID, as GitHub and Shopify ID
// deliveries.
func uuid(t testing.TB) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[:4], b[4:6], b[6:8], b[8:10], b[10:])
}
