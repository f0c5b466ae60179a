package lambdafn_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/reconcile"
)

// Every secret as deployed: each secret parameter names a Secrets Manager
// secret (on moto) and no secret is inline, so each function starts and
// runs with what it reads through its role (the IAM check, make test-iam,
// sees each read).
func TestEverySecretFromSecretsManager(t *testing.T) {
	moto := devstacktest.MotoForTest(t)
	local := pipeline.LocalEnv("")
	params := map[string]string{
		"GitHubReconcileHooks": "repos/shop/app/hooks/1", "ShopifyShopDomain": "shop.example.com", "GoPayClientId": local["GOPAY_CLIENT_ID"],
	}
	inline := map[string]string{}
	for param, variable := range map[string]string{
		"StripeWebhookSecretArn":   "STRIPE_WEBHOOK_SECRET",
		"GitHubWebhookSecretArn":   "GITHUB_WEBHOOK_SECRET",
		"ShopifyWebhookSecretArn":  "SHOPIFY_WEBHOOK_SECRET",
		"StandardWebhookSecretArn": "STANDARD_WEBHOOK_SECRET",
		"AdyenHmacKeyArn":          "ADYEN_HMAC_KEY",
		"GoPayClientSecretArn":     "GOPAY_CLIENT_SECRET",
		"StripeApiKeyArn":          "STRIPE_API_KEY",
		"GitHubTokenArn":           "GITHUB_TOKEN",
		"ShopifyAdminTokenArn":     "SHOPIFY_ADMIN_TOKEN",
		"PaddleSecretArn":          "PADDLE_WEBHOOK_SECRET",
		"MollieApiKeyArn":          "MOLLIE_API_KEY",
	} {
		params[param], _ = secretIn(t, moto, local[variable])
		inline[variable] = ""
	}
	p := pipelinetest.NewWith(t, pipelinetest.Options{Params: params})
	p.SetEndpoint("Secrets Manager", moto.URL)
	for _, fn := range []string{"ReceiverFunction", "ProcessorFunction"} {
		p.Build(t, fn, inline)
	}
	reconcileOnce := p.Build(t, "ReconcilerFunction", inline).(func(context.Context, events.EventBridgeEvent) (reconcile.Summary, error))
	if _, err := reconcileOnce(context.Background(), events.EventBridgeEvent{DetailType: "Scheduled Event"}); err != nil {
		t.Fatalf("reconciler with its secrets from Secrets Manager: %v", err)
	}
}
