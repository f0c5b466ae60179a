package privacy

import (
	"context"
	"slices"

	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// KeyEnv is the variable of the subject key: its values inline (local
// runs), or KeyEnv+"_ARN", the Secrets Manager secret holding them, newest
// first while rotating.
const KeyEnv = "SUBJECT_KEY"

// FromEnv returns the hasher of the function's subject key (KeyEnv), kept
// fresh as the providers' secrets are, and read from Secrets Manager when
// first used, not at cold start (provider.Env.SecretOnUse, or
// secrets.Loader's defaults when env sets no LoadSecret); ok is false
// when none is set.
func FromEnv(ctx context.Context, env *provider.Env) (h Hasher, ok bool, err error) {
	if env.LoadSecret == nil {
		env.LoadSecret = secrets.Loader(env, 0, 0)
	}
	s, err := env.SecretOnUse(ctx, KeyEnv)
	if err != nil || s == nil {
		return Hasher{}, false, err
	}
	return NewHasher(s), true, nil
}

// Subjects returns how the intake indexes an event (intake.Config.Subjects):
// the hashes of the subjects its provider in reg finds in it.
func Subjects(reg *provider.Registry, h Hasher) func(ctx context.Context, ev webhook.Event) ([]string, error) {
	return func(ctx context.Context, ev webhook.Event) ([]string, error) {
		p, ok := reg.Lookup(ev.Provider)
		if !ok {
			return nil, nil
		}
		subjects := SubjectsOf(p, ev)
		if len(subjects) == 0 {
			return nil, nil
		}
		return h.Index(ctx, subjects)
	}
}

// SubjectsOf returns the subjects p finds in ev (Webhook.Subjects), each
// once.
func SubjectsOf(p provider.Provider, ev webhook.Event) []provider.Subject {
	find := p.Webhook().Subjects
	if find == nil {
		return nil
	}
	var out []provider.Subject
	for _, s := range find(ev) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
