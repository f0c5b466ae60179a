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

// These are apiVersion, v2Version and snapshotType, for this package's tests.
const (
	APIVersion = apiVersion
	V2Version  = v2Version
)

var SnapshotType = snapshotType

// FetchEvent is fetchEvent, for this package's tests.
var FetchEvent = fetchEvent

// IsThin is isThin, for this package's tests.
var IsThin = isThin
