package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"

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
	// destinationHeaderValue is the local value of every header_secret.
	destinationHeaderValue = "local-hookinbox-destination-header"
	// ForwardName is the name of the destination Options.Forward adds.
	ForwardName = "forward"
)

// ErrNotLocal: a destination is a bus or a URL off this machine, and no
// Options.Forward URL takes its deliveries: the local stack calls no real
// endpoint or bus.
var ErrNotLocal = errors.New("the local stack delivers to no bus or URL off this machine: give it a local URL " +
	"(hookinbox dev --forward http://127.0.0.1:4100/ with hookinbox sink, or hookinbox chaos --destination)")

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

// LocalURL returns where the local stack delivers the events of the
// destination c: its own URL when that is on this machine; forward (the
// URL of hookinbox dev --forward) for a bus or a URL elsewhere, so
// nothing local reaches a real endpoint or bus; false when it is
// elsewhere and forward is empty.
func LocalURL(c destination.Config, forward string) (string, bool) {
	if u, err := url.Parse(c.URL); err == nil && !c.IsBus() && u.Scheme == "http" && isLoopback(u.Hostname()) {
		return c.URL, true
	}
	return forward, forward != ""
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// setDestinations sets the DESTINATIONS of a function's environment env:
// its own, each to its LocalURL (an error without one), and one named
// ForwardName for every event to Options.Forward when set; and in
// DESTINATION_SECRETS, over what env holds, the local value of every
// secret they name (Options.DestinationSecret, destinationHeaderValue).
func (s *Stack) setDestinations(env map[string]string) error {
	given, err := destination.Parse(env[destinationsEnv], true)
	if err != nil {
		return err
	}
	var cfgs []destination.Config
	for _, c := range given {
		if c.Name == ForwardName && s.opts.Forward != "" {
			return fmt.Errorf("%s: a destination is named %q, the name --forward's takes", destinationsEnv, ForwardName)
		}
		local, ok := LocalURL(c, s.opts.Forward)
		if !ok {
			return fmt.Errorf("%w: destination %s", ErrNotLocal, c.Name)
		}
		if c.IsBus() {
			c.Bus, c.Secret = "", SecretARN("hookinbox-"+c.Name)
		}
		c.URL = local
		cfgs = append(cfgs, c)
	}
	if s.opts.Forward != "" {
		cfgs = append(cfgs, destination.Config{Name: ForwardName, URL: s.opts.Forward, Events: []string{"*"},
			Secret: SecretARN("hookinbox-" + ForwardName), Concurrency: destination.DefaultConcurrency})
		if err := destination.Validate(cfgs, true); err != nil {
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
			local[c.HeaderSecret] = destinationHeaderValue
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
	env[destinationsEnv], env[destinationSecretsEnv], env[destination.LocalHTTPEnv] = string(list), string(secrets), "1"
	return nil
}

// Destinations returns the destinations of the stack's template (its
// processor's DESTINATIONS), as they would be deployed; LocalURL says
// where the local stack delivers each.
func (s *Stack) Destinations() ([]destination.Config, error) {
	env, err := s.FunctionEnv("ProcessorFunction")
	if err != nil {
		return nil, err
	}
	return destination.Parse(env[destinationsEnv], true)
}
