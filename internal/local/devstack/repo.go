package devstack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// emulatorFiles are the files of local/ that run the emulators; their
// hash names the user-cache copy (EmulatorDir).
var emulatorFiles = []string{"package.json", "package-lock.json", "emulators.js", "warmup.js"}

// EmulatorDir returns the directory the emulators run from: root/local
// when its node_modules holds them (hookinbox's own checkout after `make
// local/node_modules`), else <user cache dir>/hookinbox/emulators-<hash of
// local/'s files>, a copy of local/ whose packages `npm ci` installs once.
// The module cache is read-only, so a team's module never installs into
// hookinbox's tree. It does not install; ensureNodeModules does.
func EmulatorDir(root string) (string, error) {
	own := filepath.Join(root, "local")
	if emulatorsInstalled(own) {
		return own, nil
	}
	h := sha256.New()
	for _, name := range emulatorFiles {
		raw, err := os.ReadFile(filepath.Join(own, name))
		if err != nil {
			return "", fmt.Errorf("emulator files: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(raw))
		h.Write(raw)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("emulator directory: %w (set XDG_CACHE_HOME or HOME)", err)
	}
	return filepath.Join(cache, "hookinbox", "emulators-"+hex.EncodeToString(h.Sum(nil)[:8])), nil
}

// emulatorsInstalled reports whether dir's node_modules holds the emulators.
func emulatorsInstalled(dir string) bool {
	for _, p := range []string{"dynalite", "local-aws-sqs"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			return false
		}
	}
	return true
}

// ensureNodeModules makes dir (EmulatorDir) ready: unless its node_modules
// holds the emulators, it copies local/'s files from root into it and runs
// `npm ci` there. An exclusive flock on dir + ".lock" serialises concurrent
// callers; the second one finds the work done.
func ensureNodeModules(ctx context.Context, root, dir string, logs io.Writer) error {
	if emulatorsInstalled(dir) {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install emulators: %w", err)
	}
	lockPath := dir + ".lock"
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("install emulators: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("install emulators: lock %s: %w", lockPath, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if emulatorsInstalled(dir) {
		return nil
	}
	if own := filepath.Join(root, "local"); dir != own {
		for _, name := range emulatorFiles {
			raw, err := os.ReadFile(filepath.Join(own, name))
			if err != nil {
				return fmt.Errorf("install emulators: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
				return fmt.Errorf("install emulators: %w", err)
			}
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("install emulators into %s: npm is not in PATH (install Node 20, then run the command again): %w", dir, err)
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	tail := &tailBuffer{max: 4096}
	cmd.Stdout = io.MultiWriter(orDiscard(logs), tail)
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("install emulators: npm ci in %s: %w\n%s", dir, err, tail.String())
	}
	if !emulatorsInstalled(dir) {
		return fmt.Errorf("install emulators: npm ci in %s did not install dynalite and local-aws-sqs", dir)
	}
	return nil
}
