package github

import (
	"context"
	"regexp"
	"time"

	"github.com/hookinbox/hookinbox/provider"
)

// Provider is GitHub: hooks signed in X-Hub-Signature-256 (verifier), and
// the hooks' recent deliveries as the reconciler's source.
type Provider struct{ provider.NoFetch }

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "GITHUB_WEBHOOK_SECRET", TypeUnsigned: true, Subjects: subjects}
}

// minSecretLen is the shortest secret the verifier accepts: GitHub takes
// any string the user chose.
const minSecretLen = 16

// Verifier implements provider.Provider.
func (Provider) Verifier(secrets []string, _ *provider.Env) (provider.Verifier, error) {
	return &verifier{Secrets: secrets}, provider.CheckSecretLen(Name, secrets, minSecretLen)
}

// maxLookback is the longest GITHUB_RECONCILE_LOOKBACK: GitHub keeps a
// hook's deliveries for 3 days.
const maxLookback = 72 * time.Hour

// defaultLookback is the first run's window: the minutes between a
// deployment and its first run, and a token fixed within the hour. Beside
// an older system that handled the same hook, a longer window runs its
// work here again.
const defaultLookback = time.Hour

// hookPath is the form of a GITHUB_RECONCILE_HOOKS entry.
var hookPath = regexp.MustCompile(`^(repos/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+|orgs/[A-Za-z0-9_.-]+)/hooks/[0-9]+$`)

// Reconciler implements provider.Provider: the deliveries of the hooks in
// GITHUB_RECONCILE_HOOKS (comma-separated API paths such as
// repos/<owner>/<repo>/hooks/<id>; none turns the source off), read with
// GITHUB_TOKEN (or its _ARN) from GITHUB_API_URL, the first run going
// back GITHUB_RECONCILE_LOOKBACK (default 1h,
// at most 72h; 0s: from the first run).
func (Provider) Reconciler(ctx context.Context, env *provider.Env) (provider.Source, error) {
	r := env.Settings()
	hooks := r.List("GITHUB_RECONCILE_HOOKS")
	apiURL := r.String("GITHUB_API_URL", defaultAPIURL)
	lookback := r.Window("GITHUB_RECONCILE_LOOKBACK", defaultLookback)
	for _, hook := range hooks {
		if !hookPath.MatchString(hook) {
			r.Problem("GITHUB_RECONCILE_HOOKS: %q is not repos/<owner>/<repo>/hooks/<id> or orgs/<org>/hooks/<id>", hook)
		}
	}
	if len(hooks) > 0 && !env.HasSecret("GITHUB_TOKEN") {
		r.Problem("GITHUB_RECONCILE_HOOKS is set but GITHUB_TOKEN and GITHUB_TOKEN_ARN are empty (a token that may read the hooks' deliveries)")
	}
	if lookback > maxLookback {
		r.Problem("GITHUB_RECONCILE_LOOKBACK=%s is longer than the 3 days GitHub keeps deliveries", lookback)
	}
	if err := r.Err(); err != nil || len(hooks) == 0 {
		return provider.Source{}, err
	}
	token, err := env.Secret(ctx, "GITHUB_TOKEN")
	if err != nil {
		return provider.Source{}, err
	}
	return provider.Source{Lookback: lookback, List: &deliveries{
		Hooks: hooks, Token: token, BaseURL: apiURL, HTTP: env.HTTPClient(), Inbox: env.Inbox,
	}}, nil
}
