package deploytest

import (
	"errors"
	"fmt"
	"time"
)

// Timing is what the processor's crash safety rests on: its function
// timeout, lease and per-message budget, and the events queue's settings.
// The template's values and the processor's crash tests' shorter ones are
// checked with Validate; docs/reliability.md states the same rule.
type Timing struct {
	FunctionTimeout time.Duration // the processor's Timeout
	Lease           time.Duration // LEASE_DURATION
	Budget          time.Duration // MESSAGE_BUDGET
	Reserve         time.Duration // OUTCOME_RESERVE
	Visibility      time.Duration // the events queue's VisibilityTimeout
	MaxReceiveCount int           // its RedrivePolicy maxReceiveCount (= MAX_RECEIVE_COUNT)
	Retention       time.Duration // its MessageRetentionPeriod
}

// minLeaseMargin is the least a lease must outlast the function timeout:
// room for the clocks of two workers to differ.
const minLeaseMargin = 2 * time.Second

// Validate reports every rule t breaks:
//
//   - Reserve < Budget < FunctionTimeout: a message can be started, and
//     its outcome written after its effects end;
//   - FunctionTimeout + minLeaseMargin <= Lease: a live worker never loses
//     its lease, since nothing it does outlives the invocation;
//   - Lease < Visibility: when a dead worker's message comes back, its
//     lease has ended (or ends within one more receive), so the event is
//     taken over instead of waiting;
//   - MaxReceiveCount >= 3: a crash costs one or two receives, and the
//     event still has a receive left to succeed;
//   - Visibility × MaxReceiveCount <= Retention/10 (and so Lease ×
//     MaxReceiveCount): every receive an event may need fits well inside
//     the time SQS keeps its message.
func (t Timing) Validate() error {
	var errs []error
	if !(t.Reserve > 0 && t.Reserve < t.Budget) {
		errs = append(errs, fmt.Errorf("reserve %v must be positive and below the budget %v", t.Reserve, t.Budget))
	}
	if t.Budget >= t.FunctionTimeout {
		errs = append(errs, fmt.Errorf("budget %v must be below the function timeout %v", t.Budget, t.FunctionTimeout))
	}
	if t.Lease < t.FunctionTimeout+minLeaseMargin {
		errs = append(errs, fmt.Errorf("lease %v must be at least the function timeout %v plus %v", t.Lease, t.FunctionTimeout, minLeaseMargin))
	}
	if t.Lease >= t.Visibility {
		errs = append(errs, fmt.Errorf("lease %v must be below the queue's visibility timeout %v", t.Lease, t.Visibility))
	}
	if t.MaxReceiveCount < 3 {
		errs = append(errs, fmt.Errorf("maxReceiveCount %d must be at least 3", t.MaxReceiveCount))
	}
	if t.Visibility*time.Duration(t.MaxReceiveCount) > t.Retention/10 {
		errs = append(errs, fmt.Errorf("visibility %v × maxReceiveCount %d must be at most a tenth of the retention period %v", t.Visibility, t.MaxReceiveCount, t.Retention))
	}
	if len(errs) > 0 {
		return fmt.Errorf("processor timing: %w", errors.Join(errs...))
	}
	return nil
}
