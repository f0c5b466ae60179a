package shop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	"github.com/hookinbox/hookinbox/webhook"
)

// harness is a shop wired to either fakes or emulators, with what the
// scenario tests inspect.
type harness struct {
	shop   *Shop
	ledger interface {
		For(webhook.Key) effects.Runner
		Records(context.Context, webhook.Key) ([]effects.Record, error)
	}
	// mails returns the emails sent, in order.
	mails func() []sentMail
	// invoiceCalls returns the invoice requests made, in order.
	invoiceCalls func() []invoiceCall
	// failNextInvoice makes the next invoice request fail as Stripe does
	// with HTTP status.
	failNextInvoice func(status int)
	// stripe is the Stripe API stand-in; nil with fakes.
	stripe *standin.Stripe
	// setSubscription sets a subscription's current state in Stripe.
	setSubscription func(id, customer, status string)
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
		setSubscription: billing.setSubscription,
	}
}

// newDynamoHarness wires the shop to DynamoDB (the ledger and the shop's
// table), SES's REST API and Stripe's API, the last two as the stand-ins
// of internal/local/standin.
func newDynamoHarness(t *testing.T) *harness {
	t.Helper()
	db, shopTable := dynamoForTest(t)
	_, inboxTable := dynamoForTest(t)
	ses, stripeAPI := standin.NewSES(), standin.NewStripe()
	sesSrv, stripeSrv := serveStandin(t, ses), serveStandin(t, stripeAPI)
	mail := sesv2.New(sesv2.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(sesSrv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	cfg := testConfig
	cfg.Table = shopTable
	return &harness{
		shop:            New(cfg, db, mail, newStripeBilling(secretstest.Static("sk_test_123"), stripeSrv.URL, stripeSrv.Client())),
		ledger:          ledger.New(db, inboxTable, 0),
		mails:           func() []sentMail { return sesMails(ses) },
		invoiceCalls:    func() []invoiceCall { return stripeCalls(stripeAPI) },
		failNextInvoice: func(status int) { stripeAPI.FailNext(status) },
		stripe:          stripeAPI,
		setSubscription: stripeAPI.SetSubscription,
	}
}

// fakeDB is an in-memory table that understands the two conditions the
// effects package writes with: "not there yet" and "only if newer" (told
// apart by the :at value), and the shop's "not there yet or owned by
// :event". The scenario tests run against DynamoDB too, so
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
		if owner, owned := in.ExpressionAttributeValues[":event"]; owned {
			ok = getS(old, "event") == owner.(*types.AttributeValueMemberS).Value
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

// Query answers "pk = :pk", the only key condition the shop queries with.
func (f *fakeDB) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if aws.ToString(in.KeyConditionExpression) != "pk = :pk" {
		return nil, fmt.Errorf("fakeDB: unsupported key condition %q", aws.ToString(in.KeyConditionExpression))
	}
	pk := in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS).Value
	out := &dynamodb.QueryOutput{}
	for k, it := range f.items {
		if k[0] == pk {
			out.Items = append(out.Items, it)
		}
	}
	return out, nil
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
// does, and fails on request with errors classified as stripeBilling's are.
type fakeBilling struct {
	mu      sync.Mutex
	byKey   map[string]string
	log     []invoiceCall
	failing int
	subs    map[string]subscriptionState
}

func newFakeBilling() *fakeBilling {
	return &fakeBilling{byKey: map[string]string{}, subs: map[string]subscriptionState{}}
}

func (b *fakeBilling) Subscription(_ context.Context, id string) (subscriptionState, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sub, ok := b.subs[id]
	if !ok {
		return subscriptionState{}, webhook.Permanent(fmt.Errorf("no such subscription: %s", id))
	}
	return sub, nil
}

func (b *fakeBilling) setSubscription(id, customer, status string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs[id] = subscriptionState{ID: id, Customer: customer, Status: status}
}

func (b *fakeBilling) CreateInvoice(_ context.Context, req invoiceRequest) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	call := invoiceCall{IdempotencyKey: req.IdempotencyKey, Customer: req.Customer, Event: string(req.Key)}
	if status := b.failing; status != 0 {
		b.failing = 0
		b.log = append(b.log, call)
		err := fmt.Errorf("stripe answered %d", status)
		switch status {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusConflict, http.StatusTooManyRequests:
		default:
			if status < 500 {
				err = webhook.Permanent(err)
			}
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

// serveStandin serves h, a stand-in from internal/local/standin, until the test
// ends.
func serveStandin(t *testing.T, h http.Handler) *standin.Server {
	t.Helper()
	srv, err := standin.Serve(h, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// sesMails maps what the SES stand-in sent to sentMail.
func sesMails(ses *standin.SES) []sentMail {
	var mails []sentMail
	for _, e := range ses.Sent() {
		mails = append(mails, sentMail{To: e.To, IdempotencyTag: e.Tags[TagIdempotencyKey]})
	}
	return mails
}

// stripeCalls maps the Stripe stand-in's invoice calls to invoiceCall.
func stripeCalls(s *standin.Stripe) []invoiceCall {
	var calls []invoiceCall
	for _, c := range s.Calls() {
		calls = append(calls, invoiceCall{IdempotencyKey: c.IdempotencyKey, Customer: c.Customer, Event: c.Event, InvoiceID: c.InvoiceID})
	}
	return calls
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

// recordFaults is the effect ledger's DynamoDB with a fault in one write:
// the record of the welcome email's outcome, written after SES accepted
// it, fails (its answer lost on the way, the write not applied) the first
// fails times, or every time while always is set.
type recordFaults struct {
	testDynamoDB
	mu     sync.Mutex
	fails  int
	always bool
	failed int
}

func (f *recordFaults) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	_, intent := in.Item["state"]
	if getS(in.Item, "sk") == "effect#"+effectWelcomeEmail && !intent {
		f.mu.Lock()
		fail := f.always || f.failed < f.fails
		if fail {
			f.failed++
		}
		f.mu.Unlock()
		if fail {
			return nil, errors.New("injected: read tcp: i/o timeout")
		}
	}
	return f.testDynamoDB.PutItem(ctx, in, opts...)
}

// access reports whether holder (a Stripe customer ID, or guestHolder of a
// guest's address) has access: whether any of their entitlements is active. It
// reads them with one consistent Query.
func (s *Shop) access(ctx context.Context, holder string) (bool, error) {
	in := &dynamodb.QueryInput{
		TableName:                 &s.cfg.Table,
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pkAccess + holder)},
		ProjectionExpression:      aws.String("active"),
		ConsistentRead:            aws.Bool(true),
	}
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return false, fmt.Errorf("access of %s: %w", holder, err)
		}
		for _, it := range out.Items {
			if a, ok := it["active"].(*types.AttributeValueMemberBOOL); ok && a.Value {
				return true, nil
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return false, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
