package hookinboxtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/hookinboxtest"
	"github.com/hookinbox/hookinbox/internal/stacktemplate"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

// counter is a business with one effect, which counts its runs.
type counter struct{ runs *atomic.Int32 }

func (c counter) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return effects.DoResult(ctx, fx, "count", func(context.Context, string) (string, error) {
		c.runs.Add(1)
		return "counted " + ev.Type, nil
	})
}

func TestPipelineWithOwnBusiness(t *testing.T) {
	var runs atomic.Int32
	build := func(_ context.Context, _ aws.Config, getenv func(string) string) (processorfn.Business, error) {
		if getenv("COUNTER_NAME") != "visits" {
			t.Errorf("COUNTER_NAME = %q, want the env New was given", getenv("COUNTER_NAME"))
		}
		return counter{runs: &runs}, nil
	}
	p := hookinboxtest.New(t, hookinboxtest.Options{Business: build, Env: map[string]string{"COUNTER_NAME": "visits"}})
	ev := p.Sample(t, "stripe", "invoice.paid")
	if got := p.Deliver(t, ev); got != "accepted" {
		t.Errorf("first delivery %s, want accepted", got)
	}
	if got := p.Deliver(t, ev); got != "duplicate" {
		t.Errorf("second delivery %s, want duplicate", got)
	}
	key := ev.Key()
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinished(t, []webhook.Key{key}) })
	if got := p.Status(t, key); got != "DONE" {
		t.Errorf("status %s, want DONE", got)
	}
	recs := p.Effects(t, key)
	if runs.Load() != 1 || len(recs) != 1 || recs[0].Effect != "count" || recs[0].Result != "counted invoice.paid" {
		t.Errorf("%d runs, ledger %+v; want one run recorded as count: counted invoice.paid", runs.Load(), recs)
	}
}

// seen is a business that records every event it is handed, through one
// effect per event.
type seen struct {
	mu     sync.Mutex
	events map[webhook.Key]string // key → type
}

func (s *seen) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return effects.Do(ctx, fx, "see", func(context.Context, string) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.events[ev.Key()] = ev.Type
		return nil
	})
}

func (s *seen) typeOf(k webhook.Key) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	typ, ok := s.events[k]
	return typ, ok
}

func TestDeliversEveryProvider(t *testing.T) {
	s := &seen{events: map[webhook.Key]string{}}
	p := hookinboxtest.New(t, hookinboxtest.Options{Business: func(context.Context, aws.Config, func(string) string) (processorfn.Business, error) { return s, nil }})
	evs := []hookinboxtest.Event{
		p.Sample(t, "stripe", "checkout.session.completed"),
		p.Sample(t, "stripe", "checkout.session.completed", hookinboxtest.Variant("thin")),
		p.Sample(t, "stripe", "checkout.session.async_payment_succeeded", hookinboxtest.Value("customer", "cus_given")),
		p.Sample(t, "shopify", "orders/paid"),
		p.Sample(t, "github", "issues"),
		p.Sample(t, "standard", "invoice.paid"),
		p.Sample(t, "adyen", "AUTHORISATION"),
		p.Sample(t, "gopay", "payment.PAID"),
		p.Sample(t, "paddle", "transaction.completed"),
		p.Sample(t, "mollie", "payment.paid"),
		p.Sample(t, "mollie", "payment.open"),
	}
	var keys []webhook.Key
	for _, ev := range evs {
		if got := p.Deliver(t, ev); got != "accepted" && got != "[accepted]" {
			t.Errorf("%s: receiver answered %q, want accepted", ev.Key(), got)
		}
		keys = append(keys, ev.Key())
	}
	p.ProcessUntil(t, time.Minute, func() bool { return p.AllFinished(t, keys) })
	for _, ev := range evs {
		if st := p.Status(t, ev.Key()); st != "DONE" {
			t.Errorf("%s is %s, want DONE", ev.Key(), st)
		}
		if typ, ok := s.typeOf(ev.Key()); !ok || typ != ev.Type {
			t.Errorf("%s: the business saw type %q (handed: %v), want %q", ev.Key(), typ, ok, ev.Type)
		}
	}
	// Two samples of one name are two events about two objects (a Stripe
	// session and customer, a Shopify order).
	a, b := p.Sample(t, "stripe", "checkout.session.completed"), p.Sample(t, "stripe", "checkout.session.completed")
	session := func(ev hookinboxtest.Event) string {
		var body struct {
			Data struct {
				Object struct{ ID, Customer string }
			}
		}
		if err := json.Unmarshal(ev.Body, &body); err != nil {
			t.Fatal(err)
		}
		return body.Data.Object.ID + " " + body.Data.Object.Customer
	}
	if a.ID == b.ID || session(a) == session(b) {
		t.Errorf("two checkout events share %s / %s: want a fresh event, session and customer each", a.ID, session(a))
	}
	if x, y := p.Sample(t, "shopify", "orders/paid"), p.Sample(t, "shopify", "orders/paid"); x.ID == y.ID || string(x.Body) == string(y.Body) {
		t.Errorf("two Shopify orders share their event ID or order")
	}
}

// recorder is a testing.TB that records failures instead of failing the
// test, so a test can assert what a check reports. Run the check in its
// own goroutine (recorded): Fatal ends that goroutine.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) FailNow()          { r.Fatalf("FailNow") }
func (r *recorder) Fail()             { r.Errorf("Fail") }

// recorded runs check with a recorder and returns what it reported.
func recorded(t *testing.T, check func(testing.TB)) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.errors
}

// twoEffects runs two ledger effects that each call the outside system,
// and, when outside is set, one more call outside the ledger.
type twoEffects struct {
	calls   *atomic.Int32
	outside bool
}

func (b twoEffects) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	call := func(context.Context, string) error { b.calls.Add(1); return nil }
	if err := effects.Do(ctx, fx, "first", call); err != nil {
		return err
	}
	if b.outside {
		b.calls.Add(1)
	}
	return effects.Do(ctx, fx, "second", call)
}

func TestCheckOnce(t *testing.T) {
	for _, outside := range []bool{false, true} {
		t.Run(fmt.Sprintf("outside=%v", outside), func(t *testing.T) {
			var calls atomic.Int32
			p := hookinboxtest.New(t, hookinboxtest.Options{Business: func(context.Context, aws.Config, func(string) string) (processorfn.Business, error) {
				return twoEffects{calls: &calls, outside: outside}, nil
			}})
			errs := recorded(t, func(tb testing.TB) {
				p.CheckOnce(tb, func(tb testing.TB) hookinboxtest.Event { return p.Sample(tb, "shopify", "orders/paid") }, func() int { return int(calls.Load()) })
			})
			for _, e := range errs {
				t.Log(e)
			}
			if !outside && len(errs) > 0 {
				t.Errorf("a business whose calls all go through the ledger: CheckOnce reported\n%s", strings.Join(errs, "\n"))
			}
			if outside {
				// The call between the effects runs again when the attempt
				// fails after it: after effect 1 and after effect 2.
				var twice int
				for _, e := range errs {
					if strings.Contains(e, "more than once") {
						twice++
					}
				}
				if twice < 2 {
					t.Errorf("a call made outside the ledger: CheckOnce reported %d double side effects, want at least 2; it reported\n%s", twice, strings.Join(errs, "\n"))
				}
			}
		})
	}
}

// adder keeps a count in the business's table with UpdateItem ADD, inside
// one effect: a write that is not idempotent, so DynamoDB applying the
// SDK's second send of it (after a lost answer) counts twice.
type adder struct {
	db    *dynamodb.Client
	table string
}

var counterKey = map[string]dbtypes.AttributeValue{
	"pk": &dbtypes.AttributeValueMemberS{Value: "counter"}, "sk": &dbtypes.AttributeValueMemberS{Value: "counter"},
}

func (a adder) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return effects.Do(ctx, fx, "add", func(ctx context.Context, _ string) error {
		_, err := a.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(a.table), Key: counterKey,
			UpdateExpression:          aws.String("ADD n :one"),
			ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":one": &dbtypes.AttributeValueMemberN{Value: "1"}},
		})
		return err
	})
}

func TestCheckOnceLosesAnswersOfTheBusinessesWrites(t *testing.T) {
	p := hookinboxtest.New(t, hookinboxtest.Options{Business: func(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
		return adder{db: processorfn.DynamoDB(ctx, cfg), table: getenv("SHOP_TABLE")}, nil
	}})
	table := p.Table(t, "ShopTable")
	count := func() int {
		out, err := p.DynamoDB().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: counterKey, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := out.Item["n"].(*dbtypes.AttributeValueMemberN)
		if n == nil {
			return 0
		}
		v, _ := strconv.Atoi(n.Value)
		return v
	}
	errs := recorded(t, func(tb testing.TB) {
		p.CheckOnce(tb, func(tb testing.TB) hookinboxtest.Event { return p.Sample(tb, "github", "issues") }, count)
	})
	for _, e := range errs {
		t.Log(e)
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "lost answer") || !strings.Contains(errs[0], "more than once") {
		t.Errorf("an UpdateItem ADD inside an effect: CheckOnce reported %d problems, want one: the lost answer of that write", len(errs))
	}
}

// TestRunsTheTeamsTemplate: a template generated for a team's business
// (stacktemplate) gives the business its own table, created on the
// emulators, and its settings as the template sets them, parameters
// resolved.
func TestRunsTheTeamsTemplate(t *testing.T) {
	tpl, err := stacktemplate.Generate([]byte(`
Parameters:
  Greeting:
    Type: String
Resources:
  NotesTable:
    Type: AWS::DynamoDB::Table
    Properties:
      AttributeDefinitions:
        - {AttributeName: pk, AttributeType: S}
        - {AttributeName: sk, AttributeType: S}
      KeySchema:
        - {AttributeName: pk, KeyType: HASH}
        - {AttributeName: sk, KeyType: RANGE}
      BillingMode: PAY_PER_REQUEST
Processor:
  Environment:
    NOTES_TABLE: !Ref NotesTable
    GREETING: !Ref Greeting
`))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, tpl, 0o644); err != nil {
		t.Fatal(err)
	}
	var table, greeting string
	p := hookinboxtest.New(t, hookinboxtest.Options{
		Template:   path,
		Parameters: map[string]string{"Greeting": "hello"},
		Business: func(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
			table, greeting = getenv("NOTES_TABLE"), getenv("GREETING")
			if getenv("SHOP_TABLE") != "" {
				t.Errorf("the processor has the example shop's SHOP_TABLE: the pipeline runs hookinbox's template, not the team's")
			}
			return adder{db: processorfn.DynamoDB(ctx, cfg), table: table}, nil
		},
	})
	if table == "" || table != p.Table(t, "NotesTable") || greeting != "hello" {
		t.Errorf("the business got NOTES_TABLE %q, GREETING %q; want the stack's notes table %q and the parameter's value", table, greeting, p.Table(t, "NotesTable"))
	}
	ev := p.Sample(t, "standard", "invoice.paid")
	p.Deliver(t, ev)
	p.ProcessUntil(t, time.Minute, func() bool { return p.AllFinished(t, []webhook.Key{ev.Key()}) })
	out, err := p.DynamoDB().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: counterKey, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item["n"] == nil {
		t.Errorf("the business's table: %v, %v; want the count it wrote through the processor's client", out, err)
	}
}
