package stripe

import "github.com/hookinbox/hookinbox/webhook"

// Verifier is the verifier, for this package's tests.
type Verifier = verifier

// VerifyHeader is verifyHeader, for this package's tests.
func (s *verifier) VerifyHeader(header string, body []byte) (webhook.Event, error) {
	return s.verifyHeader(header, body)
}

// DefaultTolerance is defaultTolerance, for this package's tests.
const DefaultTolerance = defaultTolerance
