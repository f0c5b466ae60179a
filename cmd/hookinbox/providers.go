package main

// The local secrets of the providers besides Stripe: `hookinbox dev`
// enables every provider with them, and `hookinbox send` signs with them
// unless the running stack's state file or --secret says otherwise. None
// of them is for production.
const (
	localGitHubSecret      = "local-hookinbox-github"
	localShopifySecret     = "local-hookinbox-shopify"
	localStandardSecret    = "whsec_bG9jYWwtaG9va2luYm94LXN0YW5kYXJkLXdlYmhvb2tz"
	localAdyenHMACKey      = "6C6F63616C2D686F6F6B696E626F782D616479656E2D686D61632D6B65792121"
	localGoPayClientID     = "local-hookinbox-gopay"
	localGoPayClientSecret = "local-hookinbox-gopay-secret"
)

// localProviderEnv is every function's environment for the providers
// besides Stripe, with the GoPay API stand-in at gopayURL.
func localProviderEnv(gopayURL string) map[string]string {
	return map[string]string{
		"GITHUB_WEBHOOK_SECRET":   localGitHubSecret,
		"SHOPIFY_WEBHOOK_SECRET":  localShopifySecret,
		"STANDARD_WEBHOOK_SECRET": localStandardSecret,
		"ADYEN_HMAC_KEY":          localAdyenHMACKey,
		"GOPAY_CLIENT_ID":         localGoPayClientID,
		"GOPAY_CLIENT_SECRET":     localGoPayClientSecret,
		"GOPAY_API_URL":           gopayURL,
	}
}
