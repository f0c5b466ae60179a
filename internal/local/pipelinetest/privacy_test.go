package pipelinetest_test

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/gopay"
	"github.com/hookinbox/hookinbox/provider/shopify"
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
	p := pipelinetest.New(t)
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
	req, err := s.Stack.Signed(shopify.Provider{}, provider.TestEvent{ID: id, Type: topic, Body: []byte(body)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
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
	req, err := s.Stack.Signed(gopay.Provider{}, provider.TestEvent{Body: body}, time.Now())
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
// them can be read in the table, the bucket or the queues; each event's
// dedupe record stays, so a redelivery is a duplicate and runs nothing; the
// parked one cannot be replayed and says why; another customer's events
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
	emailsBefore := len(s.SES.Sent())

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
	if got := reportKeys(erased); !sameKeys(got, janes) || erased.Copies == 0 {
		t.Errorf("erased %v (%d copies), want %v", got, erased.Copies, janes)
	}
	if leaks := s.leaks(t, janeEmail, janeCustomer, "Jane"); len(leaks) != 0 {
		t.Errorf("after the erasure:\n%s", strings.Join(leaks, "\n"))
	}
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
	// The parked event cannot be replayed, and says why.
	sum, err := replay.New(replay.Config{Wait: -1}, s.Inbox, s.Events, s.DLQ, nil).Handle(ctx, replay.Request{Keys: []string{string(parkedKey)}})
	if err != nil || sum.Moved != 0 || len(sum.Events) != 1 || !strings.Contains(sum.Events[0].Note, "erased") {
		t.Errorf("replay of the erased parked event: %+v, %v; want it refused as erased", sum, err)
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
	if err != nil || len(audits) != 1 || audits[0].By != "cli:test" || audits[0].Events != 4 || audits[0].SubjectHash != erased.SubjectHash {
		t.Errorf("audit records %+v, %v; want one of cli:test, 4 events", audits, err)
	}
}

// TestShopifyComplianceTopics: the three mandatory topics are refused
// with 401 under a bad HMAC, claimed under a good one, and handled though
// the shop has no handler for them: a data request lists what is held, a
// customers/redact erases the customer's events (one kept in S3) and its
// own payload, a shop/redact every Shopify event.
func TestShopifyComplianceTopics(t *testing.T) {
	s := newPrivacyStack(t)
	ctx := context.Background()
	order := s.shopifyOrder(t, "5550101", true)
	other := s.shopify(t, "orders/paid", "5550102", `{"id":95550102,"email":"bob@example.com","customer":{"id":8,"email":"bob@example.com"},"line_items":[]}`, 200)
	redact := fmt.Sprintf(`{"shop_id":954889,"shop_domain":"erasure.myshopify.com","customer":{"id":%s,"email":%q,"phone":"555-625-1199"},"orders_to_redact":[95550101]}`, janeShopify, janeEmail)
	for _, topic := range []string{shopify.TopicDataRequest, shopify.TopicCustomersRedact, shopify.TopicShopRedact} {
		s.shopify(t, topic, "bad-"+strings.ReplaceAll(topic, "/", "-"), redact, 401)
	}
	dataReq := s.shopify(t, shopify.TopicDataRequest, "5550103", redact, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllFinal(t, []webhook.Key{order, other, dataReq}) })
	if !strings.Contains(s.Logs.String(), "data request") || !strings.Contains(s.Logs.String(), string(order)) {
		t.Errorf("no data request line naming %s in the logs", order)
	}
	redactKey := s.shopify(t, shopify.TopicCustomersRedact, "5550104", redact, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{redactKey}, inbox.Done) })
	if leaks := s.leaks(t, janeEmail, "Jane"); len(leaks) != 0 {
		t.Errorf("after customers/redact:\n%s", strings.Join(leaks, "\n"))
	}
	if _, err := s.Inbox.Payload(ctx, other); err != nil {
		t.Errorf("another customer's order after customers/redact: %v", err)
	}
	shopKey := s.shopify(t, shopify.TopicShopRedact, "5550105", `{"shop_id":954889,"shop_domain":"erasure.myshopify.com"}`, 200)
	s.ProcessUntil(t, time.Minute, func() bool { return s.AllIn(t, []webhook.Key{shopKey}, inbox.Done) })
	if leaks := s.leaks(t, "bob@example.com"); len(leaks) != 0 {
		t.Errorf("after shop/redact:\n%s", strings.Join(leaks, "\n"))
	}
	audits, err := s.Inbox.Erasures(ctx)
	if err != nil || len(audits) != 2 || !strings.HasPrefix(audits[0].By, "shopify customers/redact shopify#5550104") {
		t.Errorf("audit records %+v, %v; want customers/redact's and shop/redact's", audits, err)
	}
}

// TestRetentionRemovesFinishedPayloads: the reconciler, as built for
// Lambda, removes the payload of an event finished longer ago than
// PAYLOAD_RETENTION (one kept in S3 too) and keeps its dedupe record; an
// unfinished event keeps its payload.
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
	run := s.Build(t, "ReconcilerFunction", map[string]string{"PAYLOAD_RETENTION": "1ms"}).(func(context.Context, events.EventBridgeEvent) (reconcile.Summary, error))
	sum, err := run(ctx, events.EventBridgeEvent{})
	if err != nil || sum.PayloadsRemoved != 2 {
		t.Fatalf("reconciler run: %d payloads removed, %v; want 2", sum.PayloadsRemoved, err)
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
