package pipeline

import (
	"encoding/json"
	"fmt"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
)

// The local secrets of destinations: every secret a destination names
// has one of these as its local value, so the local processor signs what
// it delivers with a secret the developer knows.
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

// The variables the processor reads its destinations from: their list,
// and the local values of the secrets they name, by ARN, which stand in
// for Secrets Manager.
const (
	destinationsEnv       = "DESTINATIONS"
	destinationSecretsEnv = "DESTINATION_SECRETS"
)

// SecretARN returns the ARN of the local secret name.
func SecretARN(name string) string {
	return "arn:aws:secretsmanager:" + devstack.Region + ":000000000000:secret:" + name
}

// setDestinations sets the DESTINATIONS of a function's environment env:
// its own, and one named ForwardName for every event to Options.Forward
// when set; and in DESTINATION_SECRETS, over what env holds, the local
// value of every secret they name (Options.DestinationSecret,
// DestinationHeaderValue).
func (s *Stack) setDestinations(env map[string]string) error {
	cfgs, err := destination.Parse(env[destinationsEnv])
	if err != nil {
		return err
	}
	if s.opts.Forward != "" {
		for _, c := range cfgs {
			if c.Name == ForwardName {
				return fmt.Errorf("%s: a destination is named %q, the name --forward's takes", destinationsEnv, ForwardName)
			}
		}
		cfgs = append(cfgs, destination.Config{Name: ForwardName, URL: s.opts.Forward, Events: []string{"*"},
			Secret: SecretARN("hookinbox-" + ForwardName), Concurrency: destination.DefaultConcurrency})
		if err := destination.Validate(cfgs); err != nil {
			return fmt.Errorf("--forward: %w", err)
		}
	}
	if len(cfgs) == 0 {
		return nil
	}
	signing := DestinationSecret
	if s.opts.DestinationSecret != "" {
		signing = s.opts.DestinationSecret
	}
	local := map[string]string{}
	if v := env[destinationSecretsEnv]; v != "" {
		if err := json.Unmarshal([]byte(v), &local); err != nil {
			return fmt.Errorf("%s: want a JSON object from secret ARN to value", destinationSecretsEnv)
		}
	}
	for _, c := range cfgs {
		if _, ok := local[c.Secret]; !ok && c.Secret != "" {
			local[c.Secret] = signing
		}
		if _, ok := local[c.HeaderSecret]; !ok && c.HeaderSecret != "" {
			local[c.HeaderSecret] = DestinationHeaderValue
		}
	}
	list, err := json.Marshal(cfgs)
	if err != nil {
		return err
	}
	secrets, err := json.Marshal(local)
	if err != nil {
		return err
	}
	env[destinationsEnv], env[destinationSecretsEnv] = string(list), string(secrets)
	return nil
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
