package pipelinetest_test

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

const (
	janeEmail    = "jane.erasure@example.com"
	janeCustomer = "cus_ErasureJane01"
	janeShopify  = "7102211"
)

// privacyStack is a pipeline with the eraser hookinbox erase uses.
type privacyStack struct {
	*pipelinetest.Pipeline
	eraser *privacy.Eraser
}

func newPrivacyStack(t *testing.T) *privacyStack {
	return newPrivacyStackWith(t, pipelinetest.Options{})
}

func newPrivacyStackWith(t *testing.T, opts pipelinetest.Options) *privacyStack {
	p := pipelinetest.NewWith(t, opts)
	return &privacyStack{p, privacy.NewEraser(p.Inbox, privacy.NewHasher(privacy.Keys{pipeline.SubjectKey}), nil)}
}

// shopifyOrder delivers a Shopify order of jane's (its body over
// inbox.MaxPayloadBytes when large: kept in S3) and returns its key.
func (s *privacyStack) shopifyOrder(t *testing.T, id string, large bool) webhook.Key {
	t.Helper()
	pad := ""
	if large {
		pad = strings.Repeat("x", inbox.MaxPayloadBytes)
	}
	body := fmt.Sprintf(`{"id":9%s,"email":%q,"financial_status":"paid","note":%q,"customer":{"id":%s,"email":%q,"first_name":"Jane"},"line_items":[]}`,
		id, janeEmail, pad, janeShopify, janeEmail)
	s.shopify(t, "orders/paid", id, body, 200)
	return webhook.NewKey(shopify.Name, "order-9"+id+"-paid") // a paid order's orders/paid is keyed by the order
}

// shopify delivers a signed Shopify delivery of topic and checks the
// receiver's status.
func (s *privacyStack) shopify(t *testing.T, topic, id, body string, want int) webhook.Key {
	t.Helper()
	return s.shopifyOf(t, "hookinbox-test.myshopify.com", topic, id, body, want)
}

// shopifyOf is shopify for the shop whose domain the unsigned
// X-Shopify-Shop-Domain names.
func (s *privacyStack) shopifyOf(t *testing.T, shop, topic, id, body string, want int) webhook.Key {
	t.Helper()
	req, err := s.Stack.Signed(shopify.Sender(), sample.Event{ID: id, Type: topic, Body: []byte(body)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req.Headers["x-shopify-shop-domain"] = shop
	if want == 401 {
		req.Headers["x-shopify-hmac-sha256"] = "bm90IHRoZSBzaWduYXR1cmU="
	}
	if resp := s.Send(t, req); resp.StatusCode != want {
		t.Fatalf("shopify %s: %d %s, want %d", topic, resp.StatusCode, resp.Body, want)
	}
	return webhook.NewKey(shopify.Name, id)
}

// gopayPayment delivers a GoPay notification of a payment jane paid.
func (s *privacyStack) gopayPayment(t *testing.T, id int64) webhook.Key {
	t.Helper()
	pay := standin.GoPayPayment{ID: id, OrderNumber: "order-jane", State: "PAID", Amount: 1000, Currency: "CZK",
		Payer: json.RawMessage(`{"contact":{"email":"` + janeEmail + `"}}`)}
	body, _ := json.Marshal(pay)
	req, err := s.Stack.Signed(gopay.Sender(), sample.Event{Body: body}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if resp := s.Send(t, req); resp.StatusCode != 200 {
		t.Fatalf("gopay: %d %s", resp.StatusCode, resp.Body)
	}
	return webhook.NewKey(gopay.Name, fmt.Sprint(id))
}

// leaks returns where the needles can be read in what hookinbox stores:
// every item of the inbox table (inline payloads inflated), every object
// of the body bucket, every message of both queues.
func (s *privacyStack) leaks(t *testing.T, needles ...string) []string {
	t.Helper()
	ctx := context.Background()
	var found []string
	check := func(where string, b []byte) {
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				found = append(found, where+" holds "+n)
			}
		}
	}
	scan := &dynamodb.ScanInput{TableName: aws.String(s.Stack.Tables["InboxTable"])}
	for {
		page, err := s.DynamoDB.Scan(ctx, scan)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			where := fmt.Sprintf("inbox item %v/%v", item["pk"], item["sk"])
			for name, v := range item {
				switch v := v.(type) {
				case *types.AttributeValueMemberS:
					check(where+" "+name, []byte(v.Value))
				case *types.AttributeValueMemberB:
					check(where+" "+name, v.Value)
					if raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(v.Value))); err == nil {
						check(where+" "+name+" inflated", raw)
					}
				}
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		scan.ExclusiveStartKey = page.LastEvaluatedKey
	}
	s3c, bucket := s.Stack.Emulators.S3(), aws.String(s.Stack.Buckets["BodyBucket"])
	list, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Contents {
		obj, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: o.Key})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(obj.Body)
		obj.Body.Close()
		check("object "+aws.ToString(o.Key), b)
	}
	for name, q := range map[string]*queue.Queue{"events queue": s.Events, "DLQ": s.DLQ} {
		for _, m := range pipelinetest.Peek(t, q) {
			attrs, _ := json.Marshal(m.Attributes)
			check(name+" message "+m.ID, append([]byte(m.Body), attrs...))
		}
	}
	return found
}

// TestErasureLeavesNothingReadableAndKeepsTheDedupeRecords: a customer's
// events from Stripe (one done, one parked), Shopify (one over 384 KiB,
// kept in S3) and GoPay (the payer's email only in what GoPay's API
// serves) are all found by email, and after `hookinbox erase` nothing of
// the finished ones can be read in the table, the bucket or the queues;
// the parked one keeps its payload until a replay has run it, then
// nothing of it either; each event's dedupe record stays, so a
// redelivery is a duplicate and runs nothing; another customer's events
// are untouched; the erasure is audited without the address.
func TestErasureLeavesNothingReadableAndKeepsTheDedupeRecords(t *testing.T) {
	s := newPrivacyStack(t)
	ctx := context.Background()
	at := time.Now().Add(-time.Minute)
	jane := []verifytest.Option{verifytest.WithCustomer(janeCustomer), verifytest.WithEmail(janeEmail)}
	doneKey, doneBody := pipelinetest.Checkout("erase", 1, at, jane...)
	parkedKey, parkedBody := pipelinetest.Checkout("erase", 2, at, jane...)
	bobKey, bobBody := pipelinetest.Checkout("erase", 3, at)
	s.Deliver(t, doneBody)
	s.Deliver(t, bobBody)
	shopKey := s.shopifyOrder(t, "5550001", true)
	payKey := s.gopayPayment(t, 3000007001)
	all := []webhook.Key{doneKey, bobKey, shopKey, payKey}
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllFinal(t, all) })
	s.Stripe.FailNext(400)
	s.Deliver(t, parkedBody)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{parkedKey}, inbox.Dead) })

	subjects := []provider.Subject{provider.EmailSubject(janeEmail), provider.CustomerSubject("stripe", janeCustomer)}
	janes := []webhook.Key{shopKey, payKey, doneKey, parkedKey}
	before, err := s.eraser.Export(ctx, subjects)
	if err != nil {
		t.Fatal(err)
	}
	if got := reportKeys(before); !sameKeys(got, janes) {
		t.Fatalf("export before: %v, want %v", got, janes)
	}
	if leaks := s.leaks(t, janeEmail, janeCustomer); len(leaks) == 0 {
		t.Fatal("nothing of jane found before the erasure: the scan cannot see it")
	}

	erased, err := s.eraser.Erase(ctx, privacy.Request{Subjects: subjects, By: "cli:test"})
	if err != nil {
		t.Fatal(err)
	}
	if got := reportKeys(erased); !sameKeys(got, janes) || erased.Copies == 0 || erased.Waiting != 1 {
		t.Errorf("erased %v (%d copies, %d waiting), want %v, the parked one waiting", got, erased.Copies, erased.Waiting, janes)
	}
	// The parked checkout keeps its payload until it has run: a replay
	// runs it (its customer paid), then it is erased.
	for _, leak := range s.leaks(t, janeEmail, janeCustomer, "Jane") {
		if !strings.Contains(leak, string(parkedKey)) {
			t.Errorf("after the erasure: %s", leak)
		}
	}
	if _, err := s.Inbox.Payload(ctx, parkedKey); err != nil {
		t.Fatalf("the parked checkout's payload after the erasure: %v; want it kept until it has run", err)
	}
	invoices := len(s.Stripe.Invoices())
	sum, err := replay.New(replay.Config{Wait: -1}, s.Inbox, s.Events, s.DLQ, nil).Handle(ctx, replay.Request{Keys: []string{string(parkedKey)}})
	if err != nil || sum.Moved != 1 {
		t.Fatalf("replay of the parked checkout: %+v, %v", sum, err)
	}
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{parkedKey}, inbox.Done) })
	if n := len(s.Stripe.Invoices()); n != invoices+1 {
		t.Errorf("invoices after the replay: %d, want %d: the business ran for the paid order", n, invoices+1)
	}
	if leaks := s.leaks(t, janeEmail, janeCustomer, "Jane"); len(leaks) != 0 {
		t.Errorf("after the replay:\n%s", strings.Join(leaks, "\n"))
	}
	emailsBefore := len(s.SES.Sent())
	// The dedupe records stay: a redelivery is a duplicate and runs nothing.
	for _, k := range janes {
		it, err := s.Inbox.Get(ctx, k)
		if err != nil || it.PayloadRemoved != inbox.RemovedErased || it.PayloadSHA256 == "" {
			t.Errorf("%s after the erasure: %+v, %v; want its dedupe record, erased", k, it, err)
		}
	}
	if got := s.Deliver(t, doneBody); got != "duplicate" {
		t.Errorf("redelivery of %s: %s, want duplicate", doneKey, got)
	}
	s.shopifyOrder(t, "5550001", true)
	s.ProcessUntil(t, 30*time.Second, func() bool { return pipelinetest.Peek(t, s.Events) == nil })
	if n := len(s.SES.Sent()); n != emailsBefore {
		t.Errorf("emails sent after the redelivery: %d, want %d", n, emailsBefore)
	}
	if leaks := s.leaks(t, janeEmail, janeCustomer); len(leaks) != 0 {
		t.Errorf("after the redeliveries:\n%s", strings.Join(leaks, "\n"))
	}
	// Another customer's event keeps its payload.
	if _, err := s.Inbox.Payload(ctx, bobKey); err != nil {
		t.Errorf("bob's payload after jane's erasure: %v", err)
	}
	after, err := s.eraser.Export(ctx, subjects)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range after.Events {
		if e.Removed != inbox.RemovedErased || len(e.Where) != 0 {
			t.Errorf("export after: %+v, want erased with nothing stored", e)
		}
	}
	audits, err := s.Inbox.Erasures(ctx)
	if err != nil || len(audits) != 1 || audits[0].By != "cli:test" || audits[0].Events != 4 || audits[0].Waiting != 1 || audits[0].SubjectHash != erased.SubjectHash {
		t.Errorf("audit records %+v, %v; want one of cli:test, 4 events, 1 waiting", audits, err)
	}
}

// TestShopifyComplianceTopics: the three mandatory topics are refused
// with 401 under a bad HMAC, claimed under a good one, and handled though
// the shop has no handler for them: a data request records what is held
// (export --requests lists it), a customers/redact erases the customer's
// events (one kept in S3) and its own payload once finished, a shop/redact
// the shop's events.
func TestShopifyComplianceTopics(t *testing.T) {
	s := newPrivacyStack(t)
	ctx := context.Background()
	order := s.shopifyOrder(t, "5550101", true)
	other := s.shopify(t, "orders/paid", "5550102", `{"id":95550102,"email":"bob@example.com","customer":{"id":8,"email":"bob@example.com"},"line_items":[]}`, 200)
	customer := fmt.Sprintf(`"shop_id":954889,"shop_domain":"hookinbox-test.myshopify.com","customer":{"id":%s,"email":%q,"phone":"555-625-1199"}`, janeShopify, janeEmail)
	redact := `{` + customer + `,"orders_to_redact":[95550101]}`
	dataRequest := `{` + customer + `,"orders_requested":[95550101],"data_request":{"id":9999}}`
	shopRedact := `{"shop_id":954889,"shop_domain":"hookinbox-test.myshopify.com"}`
	for topic, body := range map[string]string{shopify.TopicDataRequest: dataRequest, shopify.TopicCustomersRedact: redact, shopify.TopicShopRedact: shopRedact} {
		s.shopify(t, topic, "bad-"+strings.ReplaceAll(topic, "/", "-"), body, 401)
	}
	dataReq := s.shopify(t, shopify.TopicDataRequest, "5550103", dataRequest, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllFinal(t, []webhook.Key{order, other, dataReq}) })
	reqs, err := s.Inbox.DataRequests(ctx)
	if err != nil || len(reqs) != 1 || reqs[0].Reference != "data request 9999" ||
		!strings.Contains(string(reqs[0].Report), string(order)) || strings.Contains(string(reqs[0].Report), janeEmail) {
		t.Errorf("data requests recorded: %+v, %v; want one listing %s, without the address", reqs, err, order)
	}
	redactKey := s.shopify(t, shopify.TopicCustomersRedact, "5550104", redact, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{redactKey}, inbox.Done) })
	if leaks := s.leaks(t, janeEmail, "Jane"); len(leaks) != 0 {
		t.Errorf("after customers/redact:\n%s", strings.Join(leaks, "\n"))
	}
	if _, err := s.Inbox.Payload(ctx, other); err != nil {
		t.Errorf("another customer's order after customers/redact: %v", err)
	}
	shopKey := s.shopify(t, shopify.TopicShopRedact, "5550105", shopRedact, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{shopKey}, inbox.Done) })
	if leaks := s.leaks(t, "bob@example.com", "hookinbox-test.myshopify.com"); len(leaks) != 0 {
		t.Errorf("after shop/redact:\n%s", strings.Join(leaks, "\n"))
	}
	audits, err := s.Inbox.Erasures(ctx)
	if err != nil || len(audits) != 2 || !strings.HasPrefix(audits[0].By, "shopify customers/redact shopify#5550104") {
		t.Errorf("audit records %+v, %v; want customers/redact's and shop/redact's", audits, err)
	}
}

// TestShopRedactErasesOnlyItsShop: one app, one secret, two shops. A
// shop/redact for a shop that never sent an order erases nothing; one for
// a shop erases that shop's orders and none of the other's. A captured
// order re-sent under another shop's unsigned X-Shopify-Shop-Domain and a
// fresh event id is a new event of that shop: that shop's shop/redact
// erases the copy, and the original stays with its own shop.
func TestShopRedactErasesOnlyItsShop(t *testing.T) {
	s := newPrivacyStack(t)
	ctx := context.Background()
	order := func(shop, id string) webhook.Key {
		t.Helper()
		return s.shopifyOf(t, shop, "orders/create", id, fmt.Sprintf(`{"id":9%s,"email":"buyer%s@example.com","financial_status":"pending","line_items":[]}`, id, id), 200)
	}
	a1, a2 := order("shop-a.myshopify.com", "6660001"), order("shop-a.myshopify.com", "6660002")
	b1 := order("shop-b.myshopify.com", "6660003")
	// A captured shop-a order, re-sent as shop-c's under a new id (an
	// orders/create: a paid order's orders/paid is keyed by the order, so
	// its re-sending is a duplicate).
	forged := s.shopifyOf(t, "shop-c.myshopify.com", "orders/create", "6660099",
		`{"id":96660001,"email":"buyer6660001@example.com","financial_status":"pending","line_items":[]}`, 200)
	all := []webhook.Key{a1, a2, b1, forged}
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllFinal(t, all) })
	redact := func(shop, id string) {
		t.Helper()
		// The header names another shop: the signed body decides.
		key := s.shopifyOf(t, "shop-b.myshopify.com", shopify.TopicShopRedact, id, fmt.Sprintf(`{"shop_id":1,"shop_domain":%q}`, shop), 200)
		s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{key}, inbox.Done) })
	}
	kept := func(want ...webhook.Key) {
		t.Helper()
		for _, k := range all {
			_, err := s.Inbox.Payload(ctx, k)
			if got := err == nil; got != slices.Contains(want, k) {
				t.Errorf("%s: payload kept %v, want %v (%v)", k, got, !got, err)
			}
		}
	}
	redact("gone-shop.myshopify.com", "6669001")
	kept(a1, a2, b1, forged)
	redact("shop-c.myshopify.com", "6669002")
	kept(a1, a2, b1)
	redact("Shop-A.myshopify.com", "6669003")
	kept(b1)
}

// TestCustomersRedactErasesOnlyItsShop: one app, one secret, two shops
// with a customer of the same email (each shop's own customer id). A
// customers/redact from shop A (delivered under shop B's unsigned header:
// the signed body decides) erases shop A's order and the Stripe checkout
// of that email, and leaves shop B's order; a data request from shop B
// lists shop B's events and the checkout, none of shop A's.
func TestCustomersRedactErasesOnlyItsShop(t *testing.T) {
	s := newPrivacyStack(t)
	ctx := context.Background()
	order := func(shop, id, customer string) webhook.Key {
		t.Helper()
		return s.shopifyOf(t, shop, "orders/create", id, fmt.Sprintf(`{"id":9%s,"email":%q,"customer":{"id":%s,"email":%q},"line_items":[]}`,
			id, janeEmail, customer, janeEmail), 200)
	}
	a := order("shop-a.myshopify.com", "6670001", "7100001")
	b := order("shop-b.myshopify.com", "6670002", "7100002")
	checkout, body := pipelinetest.Checkout("shops", 1, time.Now().Add(-time.Minute),
		verifytest.WithCustomer(janeCustomer), verifytest.WithEmail(janeEmail))
	s.Deliver(t, body)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllFinal(t, []webhook.Key{a, b, checkout}) })

	redact := fmt.Sprintf(`{"shop_id":1,"shop_domain":"shop-a.myshopify.com","customer":{"id":7100001,"email":%q},"orders_to_redact":[96670001]}`, janeEmail)
	key := s.shopifyOf(t, "shop-b.myshopify.com", shopify.TopicCustomersRedact, "6679001", redact, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{key}, inbox.Done) })
	for k, want := range map[webhook.Key]bool{a: false, checkout: false, b: true} {
		if _, err := s.Inbox.Payload(ctx, k); (err == nil) != want {
			t.Errorf("%s after shop A's customers/redact: payload kept %v, want %v (%v)", k, err == nil, want, err)
		}
	}

	request := fmt.Sprintf(`{"shop_id":2,"shop_domain":"shop-b.myshopify.com","customer":{"id":7100002,"email":%q},"orders_requested":[],"data_request":{"id":42}}`, janeEmail)
	key = s.shopifyOf(t, "shop-a.myshopify.com", shopify.TopicDataRequest, "6679002", request, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{key}, inbox.Done) })
	reqs, err := s.Inbox.DataRequests(ctx)
	if err != nil || len(reqs) != 1 {
		t.Fatalf("data requests: %+v, %v; want one", reqs, err)
	}
	var rep privacy.Report
	if err := json.Unmarshal(reqs[0].Report, &rep); err != nil {
		t.Fatal(err)
	}
	var listed []webhook.Key
	for _, ev := range rep.Events {
		listed = append(listed, ev.Key)
	}
	slices.Sort(listed)
	if want := []webhook.Key{b, key, checkout}; !slices.Equal(listed, want) {
		t.Errorf("shop B's data request lists %v; want %v (shop B's order, the request, and the checkout; none of shop A's)", listed, want)
	}
}

// TestAComplianceTopicNeedsItsOwnBody: Shopify signs the body, not the
// topic. A signed orders/paid body re-sent as shop/redact, and a data
// request's body re-sent as customers/redact, each with a fresh event id,
// are refused (400), claim nothing and erase nothing.
func TestAComplianceTopicNeedsItsOwnBody(t *testing.T) {
	s := newPrivacyStack(t)
	ctx := context.Background()
	order := s.shopifyOrder(t, "5550301", false)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllFinal(t, []webhook.Key{order}) })
	orderBody, err := s.Inbox.Payload(ctx, order)
	if err != nil {
		t.Fatal(err)
	}
	dataRequest := fmt.Sprintf(`{"shop_id":954889,"shop_domain":"hookinbox-test.myshopify.com","orders_requested":[],"customer":{"id":%s,"email":%q},"data_request":{"id":1}}`, janeShopify, janeEmail)
	for _, tc := range []struct{ id, topic, body string }{
		{"5550302", shopify.TopicShopRedact, string(orderBody)},
		{"5550303", shopify.TopicCustomersRedact, string(orderBody)},
		{"5550304", shopify.TopicCustomersRedact, dataRequest},
	} {
		key := s.shopify(t, tc.topic, tc.id, tc.body, 400)
		if _, err := s.Inbox.Get(ctx, key); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("%s with another topic's body: claimed (%v)", tc.topic, err)
		}
	}
	s.ProcessUntil(t, 10*time.Second, func() bool { return s.QueueEmpty(t) })
	if _, err := s.Inbox.Payload(ctx, order); err != nil {
		t.Errorf("the order's payload: %v; want it kept", err)
	}
	if audits, _ := s.Inbox.Erasures(ctx); len(audits) != 0 {
		t.Errorf("erasures: %+v, want none", audits)
	}
	if !strings.Contains(s.Logs.String(), "customers/redact: body is not of its compliance topic's shape") {
		t.Errorf("no log line gives the reason")
	}
}

// TestARedactionWaitsForAParkedPayment, on the real bootstraps: a
// person's Stripe checkout is parked (Stripe refused the invoice), then
// Shopify's customers/redact for the same email arrives. The checkout
// keeps its payload; a replay runs it, the business invoices the paid
// order, it ends DONE, and then its payload is erased.
func TestARedactionWaitsForAParkedPayment(t *testing.T) {
	s := newPrivacyStack(t)
	ctx := context.Background()
	receiver := s.StartBootstrap(t, "ReceiverFunction", nil)
	s.Receive = func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		var resp events.APIGatewayV2HTTPResponse
		payload, _ := json.Marshal(req)
		out, err := receiver.Invoke(ctx, payload)
		if err == nil {
			err = json.Unmarshal(out, &resp)
		}
		return resp, err
	}
	s.Source.Function = s.StartBootstrap(t, "ProcessorFunction", nil)
	key, body := pipelinetest.Checkout("waits", 1, time.Now().Add(-time.Minute),
		verifytest.WithCustomer(janeCustomer), verifytest.WithEmail(janeEmail))
	s.Stripe.FailNext(400)
	s.Deliver(t, body)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{key}, inbox.Dead) })
	redact := fmt.Sprintf(`{"shop_id":954889,"shop_domain":"hookinbox-test.myshopify.com","customer":{"id":%s,"email":%q},"orders_to_redact":[]}`, janeShopify, janeEmail)
	redactKey := s.shopify(t, shopify.TopicCustomersRedact, "5550401", redact, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{redactKey}, inbox.Done) })
	if it, err := s.Inbox.Get(ctx, key); err != nil || it.Status != inbox.Dead || !it.EraseWhenFinished || it.PayloadRemoved != "" {
		t.Fatalf("the parked checkout after the redaction: %+v, %v; want DEAD, its payload kept until it has run", it, err)
	}
	if rep, err := s.eraser.Export(ctx, []provider.Subject{provider.EmailSubject(janeEmail)}); err != nil || rep.Waiting == 0 {
		t.Errorf("export after the redaction: %+v, %v; want the checkout listed as waiting", rep, err)
	}
	sum, err := replay.New(replay.Config{Wait: -1}, s.Inbox, s.Events, s.DLQ, nil).Handle(ctx, replay.Request{Keys: []string{string(key)}})
	if err != nil || sum.Moved != 1 {
		t.Fatalf("replay: %+v, %v", sum, err)
	}
	s.ProcessUntil(t, time.Minute, func() bool {
		it, err := s.Inbox.Get(ctx, key)
		return err == nil && it.PayloadRemoved != ""
	})
	it, err := s.Inbox.Get(ctx, key)
	if err != nil || it.Status != inbox.Done || it.PayloadRemoved != inbox.RemovedErased {
		t.Errorf("after the replay: %+v, %v; want DONE, then erased", it, err)
	}
	if n := len(s.Stripe.Invoices()); n != 1 {
		t.Errorf("%d invoices; want the paid order's", n)
	}
	if leaks := s.leaks(t, janeEmail, janeCustomer); len(leaks) != 0 {
		t.Errorf("after the replay:\n%s", strings.Join(leaks, "\n"))
	}
}

// TestCustomersRedactSweepsTheStripeEventBridgeDLQ: with a Stripe
// EventBridge destination, 25 Stripe events EventBridge could not
// deliver wait in its dead-letter queue, two of them jane's paid
// checkouts (the last behind two full receives). Shopify's
// customers/redact for her email takes those two out of the DLQ into the
// inbox, where they run once (the business invoices both paid orders)
// and then lose their payload; the 23 others stay in the DLQ, visible
// again at once.
func TestCustomersRedactSweepsTheStripeEventBridgeDLQ(t *testing.T) {
	s := newPrivacyStackWith(t, pipelinetest.Options{Params: map[string]string{"StripeEventBridgeSource": "aws.partner/stripe.com/ed_test_sweep"}})
	ctx := context.Background()
	dlqURL := s.Stack.Queues["StripeEventBridgeDLQ"].URL
	dlq := queue.New(s.SQS, dlqURL)
	var janes []webhook.Key
	for i := range 25 {
		email := fmt.Sprintf("other%d@example.com", i)
		if i == 0 || i == 24 {
			email = janeEmail
		}
		key, detail := pipelinetest.Checkout("sweep", i, time.Now().Add(-time.Hour), verifytest.WithEmail(email))
		if email == janeEmail {
			janes = append(janes, key)
		}
		body := fmt.Sprintf(`{"version":"0","id":"eb-%d","detail-type":"checkout.session.completed","source":"aws.partner/stripe.com/ed_test_sweep","detail":%s}`, i, detail)
		if _, err := s.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dlqURL), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	redact := fmt.Sprintf(`{"shop_id":954889,"shop_domain":"hookinbox-test.myshopify.com","customer":{"id":%s,"email":%q},"orders_to_redact":[]}`, janeShopify, janeEmail)
	key := s.shopify(t, shopify.TopicCustomersRedact, "5550501", redact, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, append([]webhook.Key{key}, janes...), inbox.Done) })
	left := pipelinetest.Peek(t, dlq)
	if len(left) != 23 {
		t.Errorf("the DLQ holds %d visible messages after the redaction, want the 23 others", len(left))
	}
	for _, m := range left {
		if strings.Contains(m.Body, janeEmail) {
			t.Errorf("still in the DLQ: %s", m.Body)
		}
	}
	if n := len(s.Stripe.Invoices()); n != 2 {
		t.Errorf("%d invoices; want jane's two paid orders', which the redaction must not drop", n)
	}
	for _, k := range janes {
		if it, err := s.Inbox.Get(ctx, k); err != nil || it.PayloadRemoved != inbox.RemovedErased {
			t.Errorf("%s after it ran: payload removed %q, %v; want erased", k, it.PayloadRemoved, err)
		}
	}
	if leaks := s.leaks(t, janeEmail); len(leaks) != 0 {
		t.Errorf("after the redaction:\n%s", strings.Join(leaks, "\n"))
	}
	if audits, err := s.Inbox.Erasures(ctx); err != nil || len(audits) != 1 || audits[0].Queued != 2 {
		t.Errorf("audit records %+v, %v; want one, 2 queued events taken in", audits, err)
	}
}

// TestRetentionRemovesFinishedPayloads: the reconciler, as built for
// Lambda, removes the payload of an event finished longer ago than
// PAYLOAD_RETENTION (one kept in S3 too) and keeps its dedupe record, and
// erases at once a finished one an erasure waited for; an unfinished
// event keeps its payload.
func TestRetentionRemovesFinishedPayloads(t *testing.T) {
	s := newPrivacyStack(t)
	ctx := context.Background()
	at := time.Now().Add(-time.Minute)
	key, body := pipelinetest.Checkout("retain", 1, at)
	s.Deliver(t, body)
	large := s.shopifyOrder(t, "5550201", true)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllFinal(t, []webhook.Key{key, large}) })
	s.Stripe.FailNext(400)
	parked, parkedBody := pipelinetest.Checkout("retain", 2, at)
	s.Deliver(t, parkedBody)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{parked}, inbox.Dead) })
	// An event an erasure waited for, which finished without the
	// processor erasing it (it failed, or died, just after): the
	// reconciler erases it at once, whatever the retention.
	waited, waitedBody := pipelinetest.Checkout("retain", 3, at)
	s.Deliver(t, waitedBody)
	if _, err := s.Inbox.RemovePayload(ctx, waited, inbox.RemovedErased, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Inbox.Lease(ctx, waited, "w1", time.Now(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Inbox.Finish(ctx, waited, "w1", inbox.Result{Status: inbox.Done, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drain(t, s.Events)
	run := s.Build(t, "ReconcilerFunction", map[string]string{"PAYLOAD_RETENTION": "1ms"}).(func(context.Context, events.EventBridgeEvent) (reconcile.Summary, error))
	sum, err := run(ctx, events.EventBridgeEvent{})
	if err != nil || sum.PayloadsRemoved != 3 {
		t.Fatalf("reconciler run: %d payloads removed, %v; want 3", sum.PayloadsRemoved, err)
	}
	if it, err := s.Inbox.Get(ctx, waited); err != nil || it.PayloadRemoved != inbox.RemovedErased {
		t.Errorf("the event the erasure waited for: %+v, %v; want its payload erased", it, err)
	}
	for _, k := range []webhook.Key{key, large} {
		if _, err := s.Inbox.Payload(ctx, k); err == nil {
			t.Errorf("%s: payload still stored after its retention", k)
		}
		if it, err := s.Inbox.Get(ctx, k); err != nil || it.PayloadRemoved != inbox.RemovedExpired || it.Status != inbox.Done {
			t.Errorf("%s after retention: %+v, %v; want DONE, its payload expired", k, it, err)
		}
	}
	if got := s.Deliver(t, body); got != "duplicate" {
		t.Errorf("redelivery after retention: %s, want duplicate", got)
	}
	if _, err := s.Inbox.Payload(ctx, parked); err != nil {
		t.Errorf("parked event's payload: %v; want it kept for a replay", err)
	}
}

func reportKeys(r privacy.Report) []webhook.Key {
	var keys []webhook.Key
	for _, e := range r.Events {
		keys = append(keys, e.Key)
	}
	return keys
}

// sameKeys reports whether a and b hold the same keys.
func sameKeys(a, b []webhook.Key) bool {
	if len(a) != len(b) {
		return false
	}
	set := map[webhook.Key]bool{}
	for _, k := range a {
		set[k] = true
	}
	for _, k := range b {
		if !set[k] {
			return false
		}
	}
	return true
}
