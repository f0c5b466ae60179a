package devstack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyLocal writes local/'s emulator files (no node_modules) under a new
// root and returns it.
func copyLocal(t *testing.T) string {
	t.Helper()
	own, err := RepoRoot("")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range emulatorFiles {
		raw, err := os.ReadFile(filepath.Join(own, "local", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "local", name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestEmulatorDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)

	root := copyLocal(t)
	got, err := EmulatorDir(root)
	if err != nil {
		t.Fatal(err)
	}
	userCache, _ := os.UserCacheDir()
	if want := filepath.Join(userCache, "hookinbox") + string(filepath.Separator) + "emulators-"; !strings.HasPrefix(got, want) {
		t.Errorf("EmulatorDir without node_modules = %s, want under %s", got, want)
	}
	again, _ := EmulatorDir(root)
	if again != got {
		t.Errorf("EmulatorDir twice = %s, then %s, want the same", got, again)
	}

	// Another lock file is another directory.
	other := copyLocal(t)
	if err := os.WriteFile(filepath.Join(other, "local", "package-lock.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if dir, _ := EmulatorDir(other); dir == got {
		t.Errorf("EmulatorDir of another lock file = %s, the same as the first's", dir)
	}

	// Installed in the tree (make local/node_modules): used there.
	for _, p := range []string{"dynalite", "local-aws-sqs"} {
		pkg := filepath.Join(root, "local", "node_modules", p)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := mustEmulatorDir(t, root), filepath.Join(root, "local"); got != want {
		t.Errorf("EmulatorDir with local/node_modules = %s, want %s", got, want)
	}
}

func mustEmulatorDir(t *testing.T, root string) string {
	t.Helper()
	dir, err := EmulatorDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStartFromReadOnlyTree starts the emulators of a hookinbox tree that
// cannot be written (the module cache, in a team's module): they install
// into the user cache directory and run from there.
func TestStartFromReadOnlyTree(t *testing.T) {
	skipUnlessStarting(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	root := copyLocal(t)
	for _, p := range []string{filepath.Join(root, "local"), root} {
		if err := os.Chmod(p, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(p, 0o755) })
	}
	e, err := Start(context.Background(), Options{Root: root, Family: familyDynalite})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	dir := mustEmulatorDir(t, root)
	if !strings.HasPrefix(dir, filepath.Join(cache, "hookinbox")) || !emulatorsInstalled(dir) {
		t.Errorf("emulators not installed in %s, under %s", dir, cache)
	}
	if _, err := os.Stat(filepath.Join(root, "local", "node_modules")); err == nil {
		t.Errorf("Start wrote %s/local/node_modules, want nothing written in the tree", root)
	}
}
