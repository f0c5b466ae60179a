package shop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/hookinbox/hookinbox/internal/effects"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

// harness is a shop wired to either fakes or emulators, with what the
// scenario tests inspect.
type harness struct {
	shop   *Shop
	ledger interface {
		For(webhook.Key) effects.Runner
	}
	// mails returns the emails sent, in order.
	mails func() []sentMail
	// invoiceCalls returns the invoice requests made, in order.
	invoiceCalls func() []invoiceCall
	// failNextInvoice makes the next invoice request fail as Stripe does
	// with HTTP status.
	failNextInvoice func(status int)
}

type sentMail struct {
	To, IdempotencyTag string
}

type invoiceCall struct {
	IdempotencyKey, Customer, Event string
	InvoiceID                       string // empty when the call failed
}

var testConfig = Config{Table: "shop", MailFrom: "shop@example.com"}

// newFakeHarness wires the shop to a memory ledger and in-memory fakes.
func newFakeHarness(t *testing.T) *harness {
	t.Helper()
	mail, billing := &fakeMailer{}, newFakeBilling()
	return &harness{
		shop:            New(testConfig, newFakeDB(), mail, billing),
		ledger:          effects.NewMemoryLedger(),
		mails:           mail.sent,
		invoiceCalls:    billing.calls,
		failNextInvoice: billing.failNext,
	}
}

// newDynamoHarness wires the shop to DynamoDB (the ledger and the shop's
// table), SES's REST API and Stripe's API, the last two as httptest servers.
func newDynamoHarness(t *testing.T) *harness {
	t.Helper()
	db, shopTable := dynamoForTest(t)
	_, inboxTable := dynamoForTest(t)
	ses, stripeAPI := newSESServer(t), newStripeServer(t)
	mail := sesv2.New(sesv2.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(ses.srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	cfg := testConfig
	cfg.Table = shopTable
	return &harness{
		shop:            New(cfg, db, mail, NewStripeBilling("sk_test_123", stripeAPI.srv.URL, stripeAPI.srv.Client())),
		ledger:          effects.NewLedger(db, inboxTable, 0),
		mails:           ses.sent,
		invoiceCalls:    stripeAPI.calls,
		failNextInvoice: stripeAPI.failNext,
	}
}

// fakeDB is an in-memory table that understands the two conditions the
// effects package writes with: "not there yet" and "only if newer" (told
// apart by the :at value). The scenario tests run against DynamoDB too, so
// the fake cannot drift unnoticed.
type fakeDB struct {
	mu    sync.Mutex
	items map[[2]string]map[string]types.AttributeValue
}

func newFakeDB() *fakeDB { return &fakeDB{items: map[[2]string]map[string]types.AttributeValue{}} }

func (f *fakeDB) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := [2]string{getS(in.Item, "pk"), getS(in.Item, "sk")}
	old, exists := f.items[k]
	if aws.ToString(in.ConditionExpression) != "" && exists {
		ok := false
		if _, versioned := in.ExpressionAttributeValues[":at"]; versioned {
			newV, _ := effects.VersionOf(in.Item)
			oldV, has := effects.VersionOf(old)
			ok = !has || newV.After(oldV)
		}
		if !ok {
			return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
		}
	}
	item := make(map[string]types.AttributeValue, len(in.Item))
	for a, v := range in.Item {
		item[a] = v
	}
	f.items[k] = item
	return &dynamodb.PutItemOutput{}, nil
}

func (f *fakeDB) Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &dynamodb.ScanOutput{}
	for _, it := range f.items {
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// fakeMailer records what it sends.
type fakeMailer struct {
	mu   sync.Mutex
	log  []sentMail
	fail error
}

func (m *fakeMailer) SendEmail(_ context.Context, in *sesv2.SendEmailInput, _ ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	mail := sentMail{To: in.Destination.ToAddresses[0]}
	for _, tag := range in.EmailTags {
		if aws.ToString(tag.Name) == TagIdempotencyKey {
			mail.IdempotencyTag = aws.ToString(tag.Value)
		}
	}
	m.log = append(m.log, mail)
	return &sesv2.SendEmailOutput{MessageId: aws.String(fmt.Sprintf("msg-%d", len(m.log)))}, nil
}

func (m *fakeMailer) sent() []sentMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sentMail(nil), m.log...)
}

// fakeBilling creates invoices at most once per idempotency key, as Stripe
// does, and fails on request with errors classified as StripeBilling's are.
type fakeBilling struct {
	mu      sync.Mutex
	byKey   map[string]string
	log     []invoiceCall
	failing int
}

func newFakeBilling() *fakeBilling { return &fakeBilling{byKey: map[string]string{}} }

func (b *fakeBilling) CreateInvoice(_ context.Context, req InvoiceRequest) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	call := invoiceCall{IdempotencyKey: req.IdempotencyKey, Customer: req.Customer, Event: req.Metadata["hookinbox_event"]}
	if status := b.failing; status != 0 {
		b.failing = 0
		b.log = append(b.log, call)
		err := fmt.Errorf("stripe answered %d", status)
		if status < 500 && status != http.StatusConflict && status != http.StatusTooManyRequests {
			err = webhook.Permanent(err)
		}
		return "", err
	}
	id, ok := b.byKey[req.IdempotencyKey]
	if !ok {
		id = fmt.Sprintf("in_fake_%d", len(b.byKey)+1)
		b.byKey[req.IdempotencyKey] = id
	}
	call.InvoiceID = id
	b.log = append(b.log, call)
	return id, nil
}

func (b *fakeBilling) failNext(status int) { b.mu.Lock(); b.failing = status; b.mu.Unlock() }

func (b *fakeBilling) calls() []invoiceCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]invoiceCall(nil), b.log...)
}

// sesServer answers SES v2's SendEmail (REST-JSON) and records the messages.
type sesServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	log []sentMail
}

func newSESServer(t *testing.T) *sesServer {
	t.Helper()
	s := &sesServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v2/email/outbound-emails" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		var in struct {
			Destination struct{ ToAddresses []string }
			EmailTags   []struct{ Name, Value string }
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || len(in.Destination.ToAddresses) != 1 {
			w.Header().Set("X-Amzn-ErrorType", "BadRequestException")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"message":"bad request"}`)
			return
		}
		mail := sentMail{To: in.Destination.ToAddresses[0]}
		for _, tag := range in.EmailTags {
			if tag.Name == TagIdempotencyKey {
				mail.IdempotencyTag = tag.Value
			}
		}
		s.mu.Lock()
		s.log = append(s.log, mail)
		n := len(s.log)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"MessageId":"0100018f-test-%04d"}`, n)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sesServer) sent() []sentMail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sentMail(nil), s.log...)
}

// stripeServer answers POST /v1/invoices like Stripe: one invoice per
// Idempotency-Key, the saved answer replayed for a repeated key. An injected
// failure is not saved, like a failure before the endpoint runs.
type stripeServer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	log     []invoiceCall
	byKey   map[string]string // idempotency key → response body
	failing int
}

func newStripeServer(t *testing.T) *stripeServer {
	t.Helper()
	s := &stripeServer{byKey: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *stripeServer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || r.URL.Path != "/v1/invoices" {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"Unrecognized request URL"}}`)
		return
	}
	if err := r.ParseForm(); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	call := invoiceCall{IdempotencyKey: key, Customer: r.PostForm.Get("customer"), Event: r.PostForm.Get("metadata[hookinbox_event]")}
	s.mu.Lock()
	defer s.mu.Unlock()
	if status := s.failing; status != 0 {
		s.failing = 0
		s.log = append(s.log, call)
		typ := "invalid_request_error"
		if status >= 500 {
			typ = "api_error"
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"type":%q,"message":"injected failure"}}`, typ)
		return
	}
	body, ok := s.byKey[key]
	if !ok || key == "" {
		id := fmt.Sprintf("in_1Test%06d", len(s.byKey)+1)
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "invoice", "customer": call.Customer, "status": "draft",
			"auto_advance": r.PostForm.Get("auto_advance") == "true",
			"description":  r.PostForm.Get("description"),
			"metadata":     map[string]string{"hookinbox_event": call.Event},
		})
		body = string(b)
		s.byKey[key] = body
	}
	var inv struct{ ID string }
	json.Unmarshal([]byte(body), &inv)
	call.InvoiceID = inv.ID
	s.log = append(s.log, call)
	io.WriteString(w, body)
}

func (s *stripeServer) failNext(status int) { s.mu.Lock(); s.failing = status; s.mu.Unlock() }

func (s *stripeServer) calls() []invoiceCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]invoiceCall(nil), s.log...)
}

// invoicesCreated returns the distinct invoice IDs of successful calls.
func invoicesCreated(calls []invoiceCall) []string {
	seen := map[string]bool{}
	var ids []string
	for _, c := range calls {
		if c.InvoiceID != "" && !seen[c.InvoiceID] {
			seen[c.InvoiceID] = true
			ids = append(ids, c.InvoiceID)
		}
	}
	sort.Strings(ids)
	return ids
}

var errBoom = errors.New("boom")
