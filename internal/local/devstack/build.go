package devstack

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// BuildFunction builds the function logicalID for this host with
// `make build-<logicalID> GOOS=<host> GOARCH=<host> ARTIFACTS_DIR=<outDir>` in
// the repository root, the target `sam build` uses, so the tested build is
// the real one. It returns the path of outDir/bootstrap.
func BuildFunction(ctx context.Context, logicalID, outDir string) (string, error) {
	root, err := RepoRoot("")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", logicalID, err)
	}
	return BuildFunctionIn(ctx, root, logicalID, outDir)
}

// BuildFunctionIn is BuildFunction with the Makefile of dir: another
// module's stack, whose template and Makefile are there (sam build runs
// the Makefile of a function's CodeUri, "." beside the template).
func BuildFunctionIn(ctx context.Context, dir, logicalID, outDir string) (string, error) {
	abs, err := filepath.Abs(outDir)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", logicalID, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", logicalID, err)
	}
	makePath, err := exec.LookPath("make")
	if err != nil {
		return "", fmt.Errorf("build %s: make not found in PATH: %w", logicalID, err)
	}
	cmd := exec.CommandContext(ctx, makePath, "build-"+logicalID,
		"GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH, "ARTIFACTS_DIR="+abs)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: make build-%s in %s: %w\n%s", logicalID, logicalID, dir, err, out)
	}
	bootstrap := filepath.Join(abs, "bootstrap")
	if _, err := os.Stat(bootstrap); err != nil {
		return "", fmt.Errorf("build %s: make build-%s wrote no bootstrap: %w", logicalID, logicalID, err)
	}
	return bootstrap, nil
}

// toolBuilds holds the tool binaries built by this process, by package.
var toolBuilds struct {
	sync.Mutex
	path map[string]string
}

// toolBinary returns the path of the tool pkg of module (a `tool` line in
// go.mod) built from the version go.mod requires for this host, building it
// into the user cache directory the first time. Concurrent builders write
// to temporary names and rename, so each sees a complete binary.
func toolBinary(ctx context.Context, root, module, pkg string) (string, error) {
	toolBuilds.Lock()
	defer toolBuilds.Unlock()
	if p := toolBuilds.path[pkg]; p != "" {
		return p, nil
	}
	root, err := RepoRoot(root)
	if err != nil {
		return "", err
	}
	version, err := moduleVersion(filepath.Join(root, "go.mod"), module)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	name := filepath.Base(pkg)
	dir := filepath.Join(cache, "hookinbox", name, version+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	path := filepath.Join(dir, name)
	remember := func() (string, error) {
		if toolBuilds.path == nil {
			toolBuilds.path = map[string]string{}
		}
		toolBuilds.path[pkg] = path
		return path, nil
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return remember()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build %s: go build %s: %w\n%s", name, pkg, err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	return remember()
}

// moduleVersion returns the version go.mod requires of module.
func moduleVersion(gomod, module string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s does not require %s (add its tool with go get -tool)", gomod, module)
}
