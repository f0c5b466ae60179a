package receiverfn

import (
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/provider"
)

// settings is the receiver function's environment, as template.yaml sets it.
type settings struct {
	lambdafn.Inbox
	// Secrets holds, for each enabled provider of the registry, its
	// secrets given inline or the ARN of the Secrets Manager secret
	// holding them. A provider whose variables are both empty is disabled.
	Secrets map[string]providerSecrets
	// MAX_BODY_BYTES, default receiver.DefaultMaxBodyBytes (the most
	// Lambda can receive), or inbox.MaxPayloadBytes without BODY_BUCKET.
	MaxBodyBytes int64
	Grace        time.Duration // REENQUEUE_GRACE, default 2m
	SecretMaxAge time.Duration // SECRET_MAX_AGE, default 5m: how long secrets from Secrets Manager are used before a reload
	SecretReload time.Duration // SECRET_RELOAD_INTERVAL, default 1m: the least time between two loads of a secret
}

// providerSecrets is where one provider's secrets come from.
type providerSecrets struct {
	Inline []string // <SecretEnv>, comma-separated or a JSON array (secrets.Parse); used as is when set (local runs)
	ARN    string   // <SecretEnv>_ARN, read when Inline is empty
}

// loadSettings reads the settings of reg's providers through getenv,
// reporting every missing or invalid key in one error. At least one
// provider must be enabled.
func loadSettings(getenv func(string) string, reg *provider.Registry) (settings, error) {
	r := envconfig.New(getenv)
	s := settings{
		Inbox:        lambdafn.ReadInbox(r),
		Secrets:      map[string]providerSecrets{},
		Grace:        r.Duration("REENQUEUE_GRACE", intake.DefaultGrace),
		SecretMaxAge: r.Duration("SECRET_MAX_AGE", secrets.DefaultMaxAge),
		SecretReload: r.Duration("SECRET_RELOAD_INTERVAL", secrets.DefaultMinInterval),
	}
	maxBody := int64(receiver.DefaultMaxBodyBytes)
	if s.Bucket == "" {
		maxBody = inbox.MaxPayloadBytes
	}
	s.MaxBodyBytes = r.Int("MAX_BODY_BYTES", maxBody)
	var names []string
	for _, p := range reg.All() {
		env := p.Webhook().SecretEnv
		inline, err := secrets.Parse(r.String(env, ""))
		if err != nil {
			r.Problem("%s: %v", env, err)
		}
		ps := providerSecrets{Inline: inline, ARN: r.String(env+"_ARN", "")}
		if len(ps.Inline) > 0 || ps.ARN != "" {
			s.Secrets[p.Name()] = ps
		}
		names = append(names, env)
	}
	if len(s.Secrets) == 0 {
		r.Problem("no provider is enabled: set one of %s (comma-separated secrets) or its _ARN (a Secrets Manager secret holding them)",
			strings.Join(names, ", "))
	}
	switch {
	case s.MaxBodyBytes > maxBody && s.Bucket == "":
		r.Problem("MAX_BODY_BYTES=%d is more than the %d bytes a payload item can hold (DynamoDB's 400 KB item limit); set BODY_BUCKET to keep larger bodies in S3", s.MaxBodyBytes, maxBody)
	case s.MaxBodyBytes > maxBody:
		r.Problem("MAX_BODY_BYTES=%d is more than the %d bytes of body Lambda can receive from an HTTP API request", s.MaxBodyBytes, maxBody)
	}
	return s, r.Err()
}
