package effects

// Results of the conditional writes, for DoResult, so that the ledger
// (and `hookinbox inspect`) shows what a write really did instead of
// only that its effect ran.
const (
	// resultApplied: the write changed the stored record.
	resultApplied = "applied"
	// resultSkippedOlder: PutIfNewer left a record with a newer or equal
	// version in place; this event was older (or the same).
	resultSkippedOlder = "skipped: older than stored"
	// resultAlreadyDone: PutOnce or AddDelta found this event's record
	// already written.
	resultAlreadyDone = "already done"
)

// NewerResult names the outcome of PutIfNewer from its applied result.
func NewerResult(applied bool) string {
	if applied {
		return resultApplied
	}
	return resultSkippedOlder
}

// OnceResult names the outcome of PutOnce or AddDelta from its applied
// result.
func OnceResult(applied bool) string {
	if applied {
		return resultApplied
	}
	return resultAlreadyDone
}
