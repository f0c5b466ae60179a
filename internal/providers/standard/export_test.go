package standard

// These are maxV1a and defaultTolerance, for this package's tests.
const (
	MaxV1a    = maxV1a
	Tolerance = defaultTolerance
)
