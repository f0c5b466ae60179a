//go:build profile

package lambdafn

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"
)

// A bootstrap built with the profile tag (make build-<LogicalId>
// HOOKINBOX_PROFILE=1; never deployed) profiles its own CPU from the start,
// in windows of profileWindow, each written to
// $TMPDIR/hookinbox-profile/<function>-<pid>-<n>.pprof, so that a run
// under `hookinbox load` leaves profiles of the real bootstrap under load
// that `go tool pprof` merges. A window is written when it ends: the last
// few seconds before the process is stopped are lost.
const profileWindow = 3 * time.Second

func init() {
	dir := filepath.Join(os.TempDir(), "hookinbox-profile")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return
	}
	name := os.Getenv("AWS_LAMBDA_FUNCTION_NAME")
	go func() {
		for n := 0; ; n++ {
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d-%03d.pprof", name, os.Getpid(), n)))
			if err != nil {
				fmt.Fprintln(os.Stderr, "profile:", err)
				return
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, "profile:", err)
				f.Close()
				return
			}
			time.Sleep(profileWindow)
			pprof.StopCPUProfile()
			f.Close()
		}
	}()
}
