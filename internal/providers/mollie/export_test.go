package mollie

// Verifier is the verifier, for this package's tests.
type Verifier = verifier

// These are checkID, notify and payments, for this package's tests.
var (
	CheckID  = checkID
	Notify   = notify
	Payments = payments
)
