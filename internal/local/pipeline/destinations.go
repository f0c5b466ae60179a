package pipeline

import (
	"encoding/json"
	"fmt"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
)

// The local secrets of destinations: every secret a destination names is
// served by the stack's Secrets Manager stand-in with one of these, so
// the local processor signs what it delivers with a secret the developer
// knows.
const (
	// DestinationSecret signs every local delivery to a destination
	// (`hookinbox dev --forward` prints it; `hookinbox sink --secret`
	// verifies with it).
	DestinationSecret = "whsec_bG9jYWwtaG9va2luYm94LWRlc3RpbmF0aW9u"
	// DestinationHeaderValue is the local value of every header_secret.
	DestinationHeaderValue = "local-hookinbox-destination-header"
	// ForwardName is the name of the destination Options.Forward adds.
	ForwardName = "forward"
)

// destinationsEnv is the variable the processor reads its destinations from.
const destinationsEnv = "DESTINATIONS"

// SecretARN returns the ARN of the local secret name, as the Secrets
// Manager stand-in serves it.
func SecretARN(name string) string {
	return "arn:aws:secretsmanager:" + devstack.Region + ":000000000000:secret:" + name
}

// destinations returns the DESTINATIONS of a function whose environment
// holds value: its destinations, and one named ForwardName for every
// event to Options.Forward when set, with every secret they name put on
// the Secrets Manager stand-in with its local value
// (Options.DestinationSecret, DestinationHeaderValue).
func (s *Stack) destinations(value string) (string, error) {
	cfgs, err := destination.Parse(value)
	if err != nil {
		return "", err
	}
	if s.opts.Forward != "" {
		for _, c := range cfgs {
			if c.Name == ForwardName {
				return "", fmt.Errorf("%s: a destination is named %q, the name --forward's takes", destinationsEnv, ForwardName)
			}
		}
		cfgs = append(cfgs, destination.Config{Name: ForwardName, URL: s.opts.Forward, Events: []string{"*"},
			Secret: SecretARN("hookinbox-" + ForwardName), Concurrency: destination.DefaultConcurrency})
		if err := destination.Validate(cfgs); err != nil {
			return "", fmt.Errorf("--forward: %w", err)
		}
	}
	if len(cfgs) == 0 {
		return value, nil
	}
	signing := DestinationSecret
	if s.opts.DestinationSecret != "" {
		signing = s.opts.DestinationSecret
	}
	for _, c := range cfgs {
		if c.Secret != "" {
			s.SecretsManager.Put(c.Secret, signing)
		}
		if c.HeaderSecret != "" {
			s.SecretsManager.Put(c.HeaderSecret, DestinationHeaderValue)
		}
	}
	b, err := json.Marshal(cfgs)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Destinations returns the destinations the stack's processor delivers
// to: the template's, and Options.Forward's.
func (s *Stack) Destinations() ([]destination.Config, error) {
	env, err := s.Env("ProcessorFunction", nil)
	if err != nil {
		return nil, err
	}
	return destination.Parse(env[destinationsEnv])
}
