package devstack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
)

// RepoRoot returns the hookinbox repository's root: dir if set, else the
// first directory at or above the working directory that holds go.mod,
// else (for another module's tests that use hookinbox through
// hookinboxtest, or a CLI run elsewhere) the hookinbox module this file
// was compiled from. It must hold local/emulators.js.
func RepoRoot(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("find repository root: %w", err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = d
				break
			}
			if filepath.Dir(d) == d {
				return "", fmt.Errorf("find repository root: no go.mod at or above %s", wd)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "local", "emulators.js")); err != nil {
			if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
				dir = filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file)))) // internal/local/devstack/repo.go
			}
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	if _, err := os.Stat(filepath.Join(abs, "local", "emulators.js")); err != nil {
		return "", fmt.Errorf("find repository root: %s has no local/emulators.js (run this inside the hookinbox repository)", abs)
	}
	return abs, nil
}

// ensureNodeModules runs `npm ci --prefix local` in root unless the emulator
// packages are installed. An exclusive flock on a lock file named after root
// serialises concurrent callers; the second one finds the work done.
func ensureNodeModules(ctx context.Context, root string, logs io.Writer) error {
	installed := func() bool {
		for _, p := range []string{"dynalite", "local-aws-sqs"} {
			if _, err := os.Stat(filepath.Join(root, "local", "node_modules", p, "package.json")); err != nil {
				return false
			}
		}
		return true
	}
	if installed() {
		return nil
	}
	sum := sha256.Sum256([]byte(root))
	lockPath := filepath.Join(os.TempDir(), "hookinbox-npm-"+hex.EncodeToString(sum[:8])+".lock")
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("install emulators: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("install emulators: lock %s: %w", lockPath, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if installed() {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("install emulators: local/node_modules is missing and npm is not in PATH (install Node 20 and run npm ci --prefix local): %w", err)
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--prefix", "local", "--no-audit", "--no-fund")
	cmd.Dir = root
	tail := &tailBuffer{max: 4096}
	cmd.Stdout = io.MultiWriter(orDiscard(logs), tail)
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("install emulators: npm ci --prefix local: %w\n%s", err, tail.String())
	}
	if !installed() {
		return errors.New("install emulators: npm ci --prefix local did not install dynalite and local-aws-sqs")
	}
	return nil
}
