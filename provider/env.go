package provider

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/hookinbox/hookinbox/webhook"
)

// Env is a function's environment as a provider reads it at cold start.
// The function fills the exported fields; a test may set Getenv alone
// (secrets then come inline, never reloaded). Safe for concurrent use.
type Env struct {
	// Getenv reads a variable of the function's environment.
	Getenv func(string) string
	// AWS is the function's AWS configuration, for Secrets Manager and a
	// provider's own AWS clients.
	AWS aws.Config
	// DynamoDB and Table are the function's client and inbox table, for
	// a provider that keeps state of its own (GoPay's watched payments,
	// under partition keys of its own); nil in the receiver.
	DynamoDB *dynamodb.Client
	Table    string
	// Inbox is the inbox the reconciler claims into, for a reconcile
	// source that asks it about events (Inbox); nil elsewhere.
	Inbox Inbox
	// LoadSecret returns the secret name (Secret): its values inline in
	// the variable name, or in the Secrets Manager secret name+"_ARN"
	// names, kept fresh; with onUse, a Secrets Manager secret is loaded
	// when its values are first asked for. The function sets it; nil
	// takes the values inline only.
	LoadSecret func(ctx context.Context, name string, onUse bool) (Secret, error)
	// HTTP is the client of the provider's API calls; nil: one with a 20 s
	// timeout, well inside a function's.
	HTTP *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex // held while a secret is loaded
	secrets map[string]Secret
	smMu    sync.Mutex
	sm      *secretsmanager.Client
}

// Inbox is what a reconcile source may ask of the inbox the reconciler
// claims its events into (Env.Inbox). Safe for concurrent use.
type Inbox interface {
	// Claimed reports whether the event key has a claim.
	Claimed(ctx context.Context, key webhook.Key) (bool, error)
	// EndHold lets the event key be claimed again when its claim ended
	// IGNORED, held, because its provider did not know its object
	// (ErrNotFound). It reports whether key may be claimed now: true when
	// the hold ended or key has no claim, false when its claim is not
	// held (a later notification claimed it since).
	EndHold(ctx context.Context, key webhook.Key) (bool, error)
}

// Secret is a secret's current values (several while one is rotated),
// kept fresh while a function stays warm. Values never appear in logs or
// errors.
type Secret interface {
	// Values returns the current values, loading them again when they
	// are older than their maximum age.
	Values(ctx context.Context) ([]string, error)
	// Refresh is called with the values used when they were refused (no
	// signature matched, the API answered 401): it returns the values to
	// try instead and whether they differ from used, loading them again
	// at most once per interval.
	Refresh(ctx context.Context, used []string) (vals []string, changed bool, err error)
}

// Get returns the variable name.
func (e *Env) Get(name string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(name)
}

// Settings returns a reader of e's variables that collects every missing
// or invalid one into one error (Settings.Err).
func (e *Env) Settings() *Settings { return &Settings{get: e.Get} }

// HasSecret reports whether the secret name is set: the variable name
// (values inline) or name+"_ARN" (a Secrets Manager secret).
func (e *Env) HasSecret(name string) bool {
	return len(split(e.Get(name))) > 0 || e.Get(name+"_ARN") != ""
}

// Secret returns the secret whose values are in the variable name,
// comma-separated or a JSON array (local runs), or else in the Secrets
// Manager secret name+"_ARN" names, loaded now and kept fresh, as
// LoadSecret loads them (without it: the variable's comma-separated
// values only); nil and no error when neither is set. Every call with the
// same name returns the same Secret, so a function loads each secret
// once.
func (e *Env) Secret(ctx context.Context, name string) (Secret, error) {
	return e.secret(ctx, name, false)
}

// SecretOnUse is Secret, except that a Secrets Manager secret is loaded
// when its values are first asked for, not now: a function that needs it
// for some requests only (the receiver, the subject key) answers its
// first request without waiting for it. A secret that cannot be read
// fails those requests instead of the cold start.
func (e *Env) SecretOnUse(ctx context.Context, name string) (Secret, error) {
	return e.secret(ctx, name, true)
}

func (e *Env) secret(ctx context.Context, name string, onUse bool) (Secret, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.secrets[name]; ok {
		return s, nil
	}
	var s Secret
	var err error
	switch {
	case e.LoadSecret != nil:
		s, err = e.LoadSecret(ctx, name, onUse)
	case e.Get(name+"_ARN") != "":
		err = fmt.Errorf("%s_ARN is set, and this environment loads no Secrets Manager secret (Env.LoadSecret)", name)
	case e.HasSecret(name):
		s = inline(split(e.Get(name)))
	}
	if err != nil || s == nil {
		return nil, err
	}
	if e.secrets == nil {
		e.secrets = map[string]Secret{}
	}
	e.secrets[name] = s
	return s, nil
}

// inline is a secret's values given inline, never reloaded.
type inline []string

func (v inline) Values(context.Context) ([]string, error) { return v, nil }

func (v inline) Refresh(context.Context, []string) ([]string, bool, error) { return v, false, nil }

// SecretsManager returns the function's Secrets Manager client, made on
// first use.
func (e *Env) SecretsManager() *secretsmanager.Client {
	e.smMu.Lock()
	defer e.smMu.Unlock()
	if e.sm == nil {
		e.sm = secretsmanager.NewFromConfig(e.AWS)
	}
	return e.sm
}

// HTTPClient returns e.HTTP, or a client with a 20 s timeout.
func (e *Env) HTTPClient() *http.Client {
	if e.HTTP != nil {
		return e.HTTP
	}
	return &http.Client{Timeout: 20 * time.Second}
}

type envKey struct{}

// ContextWithEnv returns ctx carrying env: the processor hands its
// business the Env its providers read, so the business uses the secrets
// they loaded (Env.Secret) rather than loading them again.
func ContextWithEnv(ctx context.Context, env *Env) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

// EnvFromContext returns the Env ContextWithEnv put in ctx, or nil.
func EnvFromContext(ctx context.Context) *Env {
	env, _ := ctx.Value(envKey{}).(*Env)
	return env
}
