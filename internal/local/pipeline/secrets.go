package pipeline

// The local secrets: every Stack's functions get them (see Env), and
// `hookinbox send` signs with them unless told otherwise. They sign and
// authorize requests to this machine's stack and stand-ins only.
const (
	// StripeSecret is the receiver's STRIPE_WEBHOOK_SECRET.
	StripeSecret = "whsec_local_hookinbox_dev"
	// StripeKey is STRIPE_API_KEY, and the key the Stripe stand-in accepts.
	StripeKey      = "sk_test_local_hookinbox_dev"
	GitHubSecret   = "local-hookinbox-github"
	ShopifySecret  = "local-hookinbox-shopify-webhook-secret"
	StandardSecret = "whsec_bG9jYWwtaG9va2luYm94LXN0YW5kYXJkLXdlYmhvb2tz"
	// StandardSigningKey is the ed25519 key `hookinbox send standard
	// --v1a` signs with (a sender's whsk_ key, its 32-byte seed);
	// StandardPublicKey, its public key, is what the receiver holds.
	StandardSigningKey = "whsk_bG9jYWwtaG9va2luYm94LXN0YW5kYXJkLWVkMjU1MTk="
	StandardPublicKey  = "whpk_srfnsXapahVaCD+EDfQ9n+OF1KtPpm5ZERieGgDGp+M="
	AdyenHMACKey       = "6C6F63616C2D686F6F6B696E626F782D616479656E2D686D61632D6B65792121"
	GoPayClientID      = "local-hookinbox-gopay"
	GoPayClientSecret  = "local-hookinbox-gopay-secret"
	// PaddleSecret is the receiver's PADDLE_WEBHOOK_SECRET.
	PaddleSecret = "pdl_ntfset_01localhookinboxdev000000000_localHookinboxPaddleSecret"
	// mollieKey is MOLLIE_API_KEY, and the key the Mollie stand-in accepts.
	mollieKey = "test_localHookinboxMollieKey000"
	// gitHubToken is GITHUB_TOKEN, and the token the GitHub API stand-in
	// accepts.
	gitHubToken = "ghp_local_hookinbox_dev"
	// shopifyAdminToken is SHOPIFY_ADMIN_TOKEN, and the token the Shopify
	// Admin API stand-in accepts.
	shopifyAdminToken = "shpat_local_hookinbox_dev"
	// SubjectKey is SUBJECT_KEY, the key of the local stack's subject
	// index (privacy.KeyEnv).
	SubjectKey = "local-hookinbox-subject-key"
)

// LocalEnv is the local value of every secret a function may declare,
// with the GoPay API at gopayURL.
func LocalEnv(gopayURL string) map[string]string {
	return map[string]string{
		"STRIPE_WEBHOOK_SECRET":   StripeSecret,
		"STRIPE_API_KEY":          StripeKey,
		"GITHUB_WEBHOOK_SECRET":   GitHubSecret,
		"SHOPIFY_WEBHOOK_SECRET":  ShopifySecret,
		"STANDARD_WEBHOOK_SECRET": StandardSecret + "," + StandardPublicKey, // v1 and v1a
		"ADYEN_HMAC_KEY":          AdyenHMACKey,
		"GOPAY_CLIENT_ID":         GoPayClientID,
		"GOPAY_CLIENT_SECRET":     GoPayClientSecret,
		"GOPAY_API_URL":           gopayURL,
		"GITHUB_TOKEN":            gitHubToken,
		"SHOPIFY_ADMIN_TOKEN":     shopifyAdminToken,
		"PADDLE_WEBHOOK_SECRET":   PaddleSecret,
		"MOLLIE_API_KEY":          mollieKey,
		"SUBJECT_KEY":             SubjectKey,
	}
}

// SenderKeys are keys only a sender holds, by the variable of the
// receiver's secrets: `hookinbox send standard --v1a` signs with the
// local ed25519 key whose public key the receiver holds.
var SenderKeys = map[string][]string{"STANDARD_WEBHOOK_SECRET": {StandardSigningKey}}
