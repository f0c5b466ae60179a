package receiver

import (
	"time"

	"github.com/hookinbox/hookinbox/internal/envconfig"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/secrets"
)

// Settings is the receiver function's environment, as template.yaml sets it.
type Settings struct {
	Table           string        // INBOX_TABLE
	QueueURL        string        // EVENTS_QUEUE_URL
	StripeSecrets   []string      // STRIPE_WEBHOOK_SECRET, comma-separated; used as is when set
	StripeSecretARN string        // STRIPE_WEBHOOK_SECRET_ARN, read when STRIPE_WEBHOOK_SECRET is empty
	Tolerance       time.Duration // STRIPE_TOLERANCE, default 300s
	MaxBodyBytes    int64         // MAX_BODY_BYTES, default 262144, at most inbox.MaxPayloadBytes
	Grace           time.Duration // REENQUEUE_GRACE, default 2m
	SecretMaxAge    time.Duration // SECRET_MAX_AGE, default 5m: how long secrets from Secrets Manager are used before a reload
	SecretReload    time.Duration // SECRET_RELOAD_INTERVAL, default 1m: the least time between two loads of a secret
}

// LoadSettings reads the settings through getenv, reporting every missing
// or invalid key in one error.
func LoadSettings(getenv func(string) string) (Settings, error) {
	r := envconfig.New(getenv)
	s := Settings{
		Table:           r.Required("INBOX_TABLE"),
		QueueURL:        r.Required("EVENTS_QUEUE_URL"),
		StripeSecrets:   r.List("STRIPE_WEBHOOK_SECRET"),
		StripeSecretARN: r.String("STRIPE_WEBHOOK_SECRET_ARN", ""),
		Tolerance:       r.Duration("STRIPE_TOLERANCE", 300*time.Second),
		MaxBodyBytes:    r.Int("MAX_BODY_BYTES", DefaultMaxBodyBytes),
		Grace:           r.Duration("REENQUEUE_GRACE", intake.DefaultGrace),
		SecretMaxAge:    r.Duration("SECRET_MAX_AGE", secrets.DefaultMaxAge),
		SecretReload:    r.Duration("SECRET_RELOAD_INTERVAL", secrets.DefaultMinInterval),
	}
	if len(s.StripeSecrets) == 0 && s.StripeSecretARN == "" {
		r.Problem("set STRIPE_WEBHOOK_SECRET (comma-separated signing secrets) or STRIPE_WEBHOOK_SECRET_ARN (a Secrets Manager secret holding them)")
	}
	if s.MaxBodyBytes > inbox.MaxPayloadBytes {
		r.Problem("MAX_BODY_BYTES=%d is more than the %d bytes a payload item can hold (DynamoDB's 400 KB item limit)", s.MaxBodyBytes, inbox.MaxPayloadBytes)
	}
	return s, r.Err()
}
