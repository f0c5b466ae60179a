package devstack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A child given an *os.File for stdout writes to it itself; one given any
// other writer has its output copied there and kept in the tail.
func TestChildOutput(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var copied strings.Builder
	for _, tc := range []struct {
		name   string
		stdout interface{ Write([]byte) (int, error) }
		read   func() string
		tailed bool
	}{
		{"file", file, func() string { b, _ := os.ReadFile(file.Name()); return string(b) }, false},
		{"writer", &copied, copied.String, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := startChild(exec.Command("sh", "-c", "echo out; echo err >&2"), tc.stdout, nil)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-c.done:
			case <-time.After(10 * time.Second):
				t.Fatal("sh did not exit")
			}
			if _, isFile := c.cmd.Stdout.(*os.File); isFile == tc.tailed {
				t.Errorf("child's stdout is %T", c.cmd.Stdout)
			}
			if got := tc.read(); got != "out\n" {
				t.Errorf("stdout got %q, want %q", got, "out\n")
			}
			// stdout and stderr are copied by goroutines of their own:
			// their order in the tail is not fixed.
			got := c.tail.String()
			if !strings.Contains(got, "err\n") || strings.Contains(got, "out\n") != tc.tailed || len(got) > len("out\nerr\n") {
				t.Errorf("tail %q: want err, and out only when stdout is copied (%v)", got, tc.tailed)
			}
		})
	}
}
