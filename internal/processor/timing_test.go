package processor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/deploytest"
	"github.com/hookinbox/hookinbox/internal/processor"
)

// shortTiming is the configuration of the crash tests: the template's rule
// at a tenth of the scale.
var shortTiming = deploytest.Timing{
	FunctionTimeout: 3 * time.Second, Lease: 5 * time.Second, Budget: time.Second, Reserve: 300 * time.Millisecond,
	Visibility: 8 * time.Second, MaxReceiveCount: 5, Retention: 4 * 24 * time.Hour,
}

func TestTimingRule(t *testing.T) {
	template := deploytest.Timing{
		FunctionTimeout: 30 * time.Second, Lease: processor.DefaultLeaseFor, Budget: processor.DefaultBudget, Reserve: processor.DefaultReserve,
		Visibility: 180 * time.Second, MaxReceiveCount: 5, Retention: 345600 * time.Second,
	}
	tests := []struct {
		name    string
		change  func(*deploytest.Timing)
		base    deploytest.Timing
		wantErr string // empty: valid
	}{
		{name: "the template's", base: template},
		{name: "the crash tests' short one", base: shortTiming},
		{name: "the old 15-minute lease", base: template, change: func(t *deploytest.Timing) { t.Lease = 15 * time.Minute },
			wantErr: "below the queue's visibility timeout"},
		{name: "a lease no longer than the timeout", base: template, change: func(t *deploytest.Timing) { t.Lease = 31 * time.Second },
			wantErr: "at least the function timeout"},
		{name: "a budget above the timeout", base: template, change: func(t *deploytest.Timing) { t.Budget = 40 * time.Second },
			wantErr: "below the function timeout"},
		{name: "no reserve", base: template, change: func(t *deploytest.Timing) { t.Reserve = 0 }, wantErr: "reserve"},
		{name: "two receives", base: template, change: func(t *deploytest.Timing) { t.MaxReceiveCount = 2 }, wantErr: "at least 3"},
		{name: "a short retention", base: template, change: func(t *deploytest.Timing) { t.Retention = time.Hour },
			wantErr: "a tenth of the retention"},
		{name: "visibility just above the lease is valid", base: template,
			change: func(t *deploytest.Timing) { t.Visibility = 50 * time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm := tt.base
			if tt.change != nil {
				tt.change(&tm)
			}
			err := tm.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate() = %v, want an error about %q", err, tt.wantErr)
			}
		})
	}
}
