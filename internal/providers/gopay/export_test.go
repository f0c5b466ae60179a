package gopay

// Verifier is the verifier, for this package's tests.
type Verifier = verifier

// Payments is payments, for this package's tests.
var Payments = payments
