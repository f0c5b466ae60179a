package devstack

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestProcessCPUCountsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU times come from /proc (Linux)")
	}
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the kernel has counted at least one more tick; give
	// up after 5 s of wall time.
	x := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		for i := 0; i < 1_000_000; i++ {
			x += i
		}
		after, err := ProcessCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after > before {
			return
		}
	}
	t.Errorf("ProcessCPU(self) stayed at %v while this process burned CPU (%d)", before, x)
}

func TestProcessCPUOfNoProcess(t *testing.T) {
	if _, err := ProcessCPU(1 << 30); err == nil {
		t.Error("processCPU of a pid that cannot exist: no error")
	}
}
