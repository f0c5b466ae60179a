package effects

// Results of the conditional writes, for DoResult, so that the ledger
// (and `hookinbox inspect`) shows what a write really did instead of
// only that its effect ran.
const (
	// ResultApplied: the write changed the stored record.
	ResultApplied = "applied"
	// ResultSkippedOlder: PutIfNewer left a record with a newer or equal
	// version in place; this event was older (or the same).
	ResultSkippedOlder = "skipped: older than stored"
	// ResultAlreadyDone: PutOnce or AddDelta found this event's record
	// already written.
	ResultAlreadyDone = "already done"
)

// NewerResult names the outcome of PutIfNewer from its applied result.
func NewerResult(applied bool) string {
	if applied {
		return ResultApplied
	}
	return ResultSkippedOlder
}

// OnceResult names the outcome of PutOnce or AddDelta from its applied
// result.
func OnceResult(applied bool) string {
	if applied {
		return ResultApplied
	}
	return ResultAlreadyDone
}
