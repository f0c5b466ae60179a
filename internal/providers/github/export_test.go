package github

// Verifier is the verifier, for this package's tests.
type Verifier = verifier
