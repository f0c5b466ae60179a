package lambdafn_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/webhook"
)

// secretIn creates a Secrets Manager secret on moto holding value and
// returns its ARN and a function that puts a new value in it.
func secretIn(t *testing.T, moto *devstack.Moto, value string) (string, func(string)) {
	t.Helper()
	sm := moto.SecretsManager()
	ctx := context.Background()
	out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{
		Name: aws.String("hookinbox/" + devstack.UniqueStackName()), SecretString: aws.String(value),
	})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(out.ARN)
	return arn, func(v string) {
		t.Helper()
		if _, err := sm.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: &arn, SecretString: &v}); err != nil {
			t.Fatal(err)
		}
	}
}

// A Stripe key rolled while the processor stays warm: the 401s it causes
// are retried, not parked, and the key put in Secrets Manager reaches the
// running processor's billing client without a cold start.
func TestStripeKeyRotationReachesWarmProcessor(t *testing.T) {
	moto := devstacktest.MotoForTest(t)
	arn, putKey := secretIn(t, moto, "sk_test_old")
	// Deployed with the secret's ARN, as the role's grant needs.
	p := pipelinetest.NewWith(t, pipelinetest.Options{Params: map[string]string{"StripeApiKeyArn": arn}})
	p.Stripe.SetKey("sk_test_old")
	p.SetEndpoint("Secrets Manager", moto.URL)
	process := p.Build(t, "ProcessorFunction", map[string]string{
		"STRIPE_API_KEY": "",
		// Reloads may follow each other at once: the test needs no clock.
		"SECRET_RELOAD_INTERVAL": "1ms",
	}).(func(context.Context, events.SQSEvent) (events.SQSEventResponse, error))
	ctx := context.Background()
	now := time.Now().Add(-time.Minute)
	run := func(key webhook.Key) inbox.Item {
		t.Helper()
		batch := p.ReceiveBatch(t, 1)
		resp, err := process(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		// As Lambda's event source mapping: a success is deleted; a
		// failure is made visible again at once, for the next attempt.
		handle := batch.Records[0].ReceiptHandle
		if len(resp.BatchItemFailures) == 0 {
			err = p.Events.Delete(ctx, handle)
		} else {
			err = p.Events.Release(ctx, handle)
		}
		if err != nil {
			t.Fatal(err)
		}
		it, err := p.Inbox.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}

	a, body := pipelinetest.Checkout("rot", 1, now)
	p.Deliver(t, body)
	if it := run(a); it.Status != inbox.Done {
		t.Fatalf("%s with the current key: %s (%s), want DONE", a, it.Status, it.LastError)
	}

	// Stripe rolls the key; Secrets Manager still holds the old one.
	p.Stripe.SetKey("sk_test_new")
	b, body := pipelinetest.Checkout("rot", 2, now)
	p.Deliver(t, body)
	it := run(b)
	if it.Status != inbox.Failed || !strings.Contains(it.LastError, "401") {
		t.Fatalf("%s with a refused key: %s (%q), want FAILED (retried) with the 401", b, it.Status, it.LastError)
	}

	// The new key is put in Secrets Manager: the next attempt reloads it.
	putKey("sk_test_new")
	if it := run(b); it.Status != inbox.Done {
		t.Fatalf("%s after the key was put in Secrets Manager: %s (%s), want DONE", b, it.Status, it.LastError)
	}
	c, body := pipelinetest.Checkout("rot", 3, now)
	p.Deliver(t, body)
	if it := run(c); it.Status != inbox.Done {
		t.Fatalf("%s with the new key: %s (%s), want DONE", c, it.Status, it.LastError)
	}

	if got := p.Stripe.Refused(); got != 2 {
		t.Errorf("Stripe refused %d requests, want 2 (%s's first call of each attempt, with the old key)", got, b)
	}
	if got := len(p.Stripe.Invoices()); got != 3 {
		t.Errorf("%d invoices, want 3", got)
	}
	if d := p.DLQReasons(t); len(d) != 0 {
		t.Errorf("DLQ holds %v, want nothing: a refused key is not permanent", d)
	}
}

// A webhook signing secret revoked in Secrets Manager stops verifying in a
// warm receiver once the loaded secrets are older than SECRET_MAX_AGE, and
// a rolled one is accepted on the first delivery signed with it.
func TestWebhookSecretRotationInWarmReceiver(t *testing.T) {
	moto := devstacktest.MotoForTest(t)
	arn, putSecret := secretIn(t, moto, "whsec_old")
	p := pipelinetest.NewWith(t, pipelinetest.Options{Params: map[string]string{"StripeWebhookSecretArn": arn}})
	p.SetEndpoint("Secrets Manager", moto.URL)
	receive := p.Build(t, "ReceiverFunction", map[string]string{
		"STRIPE_WEBHOOK_SECRET": "",
		// Every delivery finds the secrets past their age: no clock needed.
		"SECRET_MAX_AGE": "1ms", "SECRET_RELOAD_INTERVAL": "1ms",
	}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	n := 0
	deliver := func(secret string) int {
		t.Helper()
		n++
		_, body := pipelinetest.Checkout("whrot", n, time.Now())
		req := lambdalocal.WebhookEvent("stripe", "POST", map[string]string{"stripe-signature": stripe.SignatureHeader(body, time.Now(), secret)}, body)
		resp, err := receive(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	if got := deliver("whsec_old"); got != 200 {
		t.Fatalf("signed with the current secret: %d, want 200", got)
	}
	putSecret("whsec_new,whsec_old") // rolling: both
	if got := deliver("whsec_new"); got != 200 {
		t.Errorf("signed with the new secret: %d, want 200", got)
	}
	putSecret("whsec_new") // the old one revoked
	if got := deliver("whsec_old"); got != 401 {
		t.Errorf("signed with the revoked secret: %d, want 401", got)
	}
	if got := deliver("whsec_new"); got != 200 {
		t.Errorf("signed with the new secret after the revocation: %d, want 200", got)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := devstack.StopSharedMoto(); err != nil {
		code = 1
	}
	if err := devstack.StopShared(); err != nil {
		code = 1
	}
	os.Exit(code)
}
