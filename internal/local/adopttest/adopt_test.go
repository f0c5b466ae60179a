package adopttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

const hookinbox = "github.com/hookinbox/hookinbox"

// TestAdoptingCommandsInAFreshModule runs docs/adopting.md's commands, as
// written there, in a module outside the repository: section 1's (a new
// module that gets hookinbox@main and its CLI as a tool), then, with the
// example's business copied in as the page says, section 3's that fetch
// its imports, generate its template and run its tests (with -short:
// make test-examples runs the example's pipeline tests), then section 4's:
// make dev in the background, the page's send, inspect and replay lines
// against it, status, and Ctrl-C. It runs them as a user who is not root
// (nobody, when the test runs as root), with a module cache of that
// user's, which Go keeps read-only, and hookinbox@main served from this
// checkout's committed tree; every other module from this machine's
// module cache, into which the test first fetches what the module needs
// (fetchModules), so it passes on a machine whose cache was empty. Then
// hookinbox's directory in the module cache is unchanged and the
// emulators are in the user's cache directory.
//
// The user's build cache starts as a hard-linked copy of the test's own,
// so what this machine already compiled with the same paths (the standard
// library, the functions' -trimpath builds) is not compiled again.
func TestAdoptingCommandsInAFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hookinbox's CLI, the example's tests and its functions as another user")
	}
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "adopting.md"))
	if err != nil {
		t.Fatal(err)
	}
	setup := shBlock(t, doc, "go mod init")
	build := strings.Replace(shBlock(t, doc, "go tool hookinbox template --business"), "go test ./...", "go test -short ./...", 1)
	devLine, _, _ := strings.Cut(shBlock(t, doc, "make dev"), "\n")
	local := shBlock(t, doc, "go tool hookinbox send")

	work, err := os.MkdirTemp("", "hookinbox-adopt-")
	if err != nil {
		t.Fatal(err)
	}
	u := newUser(t, work)
	home, src, proxy := filepath.Join(work, "home"), filepath.Join(work, "src"), filepath.Join(work, "proxy")
	for _, d := range []string{home, src, proxy, filepath.Join(work, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeProxy(t, root, proxy)
	// The other modules from this machine's download cache, read as a
	// second proxy: the same versions hookinbox's own build fetched, and
	// what else the fresh module needs, fetched first.
	fetchModules(t, filepath.Join(root, "examples", "custom-business"), root)
	downloads := filepath.Join(work, "downloads")
	if out, err := exec.Command("cp", "-a", filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download"), downloads).CombinedOutput(); err != nil {
		t.Fatalf("copy the download cache: %v\n%s", err, out)
	}
	u.own(t, work)
	u.seedBuildCache(t, goEnv(t, "GOCACHE"), filepath.Join(home, ".cache", "go-build"))

	// End a minute before go test would, so the cleanup runs.
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(20 * time.Minute)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(-time.Minute))
	defer cancel()
	// The test's environment (certificates, proxies), but the user's own
	// home, caches and Go settings.
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "GO") && !strings.HasPrefix(k, "XDG_") && k != "HOME" && k != "TMPDIR" && !strings.HasPrefix(k, "AWS_ENDPOINT_URL") && !strings.HasPrefix(k, "HOOKINBOX_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "TMPDIR="+filepath.Join(work, "tmp"),
		// No network for Go: a module missing here is an error, not a wait.
		"GOPROXY=file://"+proxy+",file://"+downloads+",off",
		"GOSUMDB=off", // hookinbox@main here is this checkout, unknown to any checksum database
		"GOTOOLCHAIN=local", "GOFLAGS=",
		"HOOKINBOX_ADDR="+freeAddr(t)) // make dev's address: the machine is shared
	t.Cleanup(func() {
		// The module cache is read-only: go clean -modcache empties it.
		u.run(context.Background(), t, src, env, "go clean -modcache")
		if err := os.RemoveAll(work); err != nil {
			t.Logf("remove %s: %v", work, err)
		}
	})

	if out, err := u.run(ctx, t, src, env, setup); err != nil {
		t.Fatalf("adopting.md's section 1 failed: %v\n%s", err, out)
	}
	mod := filepath.Join(src, "my-webhooks")
	copyExample(t, filepath.Join(root, "examples", "custom-business"), mod, "example.com/my-webhooks")
	u.own(t, mod)
	if out, err := u.run(ctx, t, mod, env, build); err != nil {
		t.Fatalf("adopting.md's commands after copying the example failed: %v\n%s", err, out)
	}
	u.copyTools(t, filepath.Join(home, ".cache"))
	runLocally(ctx, t, u, mod, env, devLine, local)

	modcache, err := filepath.Glob(filepath.Join(home, "go", "pkg", "mod", "github.com", "hookinbox", "hookinbox@*"))
	if err != nil || len(modcache) != 1 {
		t.Fatalf("hookinbox in the module cache: %v (%v)", modcache, err)
	}
	if _, err := os.Stat(filepath.Join(modcache[0], "local", "node_modules")); err == nil {
		t.Errorf("%s/local/node_modules exists: the emulators were installed into the module cache", modcache[0])
	}
	if fi, err := os.Stat(filepath.Join(modcache[0], "local")); err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("hookinbox's local/ in the module cache is not read-only: %v (%v)", fi.Mode(), err)
	}
	installed, _ := filepath.Glob(filepath.Join(home, ".cache", "hookinbox", "emulators-*", "node_modules", "dynalite", "package.json"))
	if len(installed) != 1 {
		t.Errorf("emulators in the user cache directory: %v, want one install under %s", installed, filepath.Join(home, ".cache", "hookinbox"))
	}
}

// runLocally runs section 4 of adopting.md in mod: devLine (make dev, with
// the CRM's URL the test's fake CRM) in the background until its banner,
// then each line of local as written, the key the first send printed in
// place of inspect's 'stripe#evt_...' once inspect shows that event DONE,
// then status; then Ctrl-C, after which dev says it stopped everything.
func runLocally(ctx context.Context, t *testing.T, u runner, mod string, env []string, devLine, local string) {
	if !strings.Contains(local, "'stripe#evt_...'") {
		t.Fatalf("adopting.md's section 4 no longer inspects 'stripe#evt_...', which this test checks DONE:\n%s", local)
	}
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":"crm_1"}`))
	}))
	defer crm.Close()
	devLine = regexp.MustCompile(`CRM_URL=\S+`).ReplaceAllString(devLine, "CRM_URL="+crm.URL)

	var log pipelinetest.SyncBuffer
	dev := u.command(ctx, mod, env, devLine)
	dev.Stdout, dev.Stderr = &log, &log
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- dev.Wait() }()
	defer func() {
		_ = syscall.Kill(-dev.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
			t.Logf("%s: %v of CPU", devLine, (dev.ProcessState.UserTime() + dev.ProcessState.SystemTime()).Round(time.Second))
			if ctx.Err() == nil && !strings.Contains(log.String(), "stopped; nothing left running") {
				t.Errorf("%s after Ctrl-C did not say it stopped everything:\n%s", devLine, log.String())
			}
		case <-time.After(time.Minute):
			_ = syscall.Kill(-dev.Process.Pid, syscall.SIGKILL)
			t.Errorf("%s did not stop within a minute of Ctrl-C:\n%s", devLine, log.String())
		}
	}()
	begin := time.Now()
	waitFor(ctx, t, "the banner of "+devLine, &log, exited, func() bool { return strings.Contains(log.String(), "is ready") })
	t.Logf("%s: ready after %v", devLine, time.Since(begin).Round(time.Second))

	var key string
	for _, line := range strings.Split(strings.TrimSpace(local), "\n") {
		if strings.Contains(line, "'stripe#evt_...'") {
			if key == "" {
				t.Fatalf("no send before %s printed a Stripe key to inspect", line)
			}
			waitFor(ctx, t, key+" DONE", &log, exited, func() bool {
				var got struct{ Item struct{ Status string } }
				out, _ := u.command(ctx, mod, env, "go tool hookinbox inspect '"+key+"' --json").Output()
				return json.Unmarshal(out, &got) == nil && got.Item.Status == "DONE"
			})
			line = strings.Replace(line, "stripe#evt_...", key, 1)
		}
		out, err := u.run(ctx, t, mod, env, line)
		if err != nil {
			t.Fatalf("adopting.md's %s: %v\n%s\ndev:\n%s", line, err, out, log.String())
		}
		if m := regexp.MustCompile(`hookinbox inspect '(stripe#[^']+)'`).FindStringSubmatch(out); m != nil && key == "" {
			key = m[1]
		}
		if strings.Contains(line, " inspect ") && !strings.Contains(out, "DONE") {
			t.Errorf("%s shows no DONE:\n%s", line, out)
		}
	}
	if out, err := u.run(ctx, t, mod, env, "go tool hookinbox status"); err != nil {
		t.Errorf("go tool hookinbox status: %v\n%s", err, out)
	}
}

// waitFor polls done until it holds, failing the test when ctx ends or
// the command exits first.
func waitFor(ctx context.Context, t *testing.T, what string, log *pipelinetest.SyncBuffer, exited <-chan error, done func() bool) {
	t.Helper()
	for !done() {
		select {
		case err := <-exited:
			t.Fatalf("exited (%v) while waiting for %s:\n%s", err, what, log.String())
		case <-ctx.Done():
			t.Fatalf("no %s: %v\n%s", what, ctx.Err(), log.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freeAddr returns 127.0.0.1 and a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// fetchModules puts into this machine's module cache every module the
// build list of the module example (a copy whose hookinbox is root)
// holds: what the fresh module, which is that example with hookinbox
// from the proxy, needs for its steps (go mod tidy reads modules that
// hookinbox's own build never fetched). It fetches them as this machine
// fetches modules (its GOPROXY and checksum database), so the user's
// steps then run offline also on a machine whose cache was empty.
func fetchModules(t *testing.T, example, root string) {
	t.Helper()
	mod := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum"} {
		raw, err := os.ReadFile(filepath.Join(example, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"mod", "edit", "-replace=" + hookinbox + "=" + root}, {"mod", "download", "all"}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// goEnv returns the test's go env value of name.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// shBlock returns the ```sh block of the page that contains marker.
func shBlock(t *testing.T, doc []byte, marker string) string {
	t.Helper()
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllSubmatch(doc, -1) {
		if bytes.Contains(m[1], []byte(marker)) {
			return string(m[1])
		}
	}
	t.Fatalf("docs/adopting.md has no sh block with %q", marker)
	return ""
}

// runner runs commands as a user who is not root.
type runner struct {
	cred *syscall.Credential // nil: the test's own user, already not root
}

// newUser returns the test's own user, or nobody when the test runs as
// root (whom a read-only directory does not stop).
func newUser(t *testing.T, work string) runner {
	t.Helper()
	if os.Geteuid() != 0 {
		return runner{}
	}
	nobody, err := lookupUser("nobody")
	if err != nil {
		os.RemoveAll(work)
		t.Skipf("running as root and there is no user nobody to run adopting.md's commands as: %v", err)
	}
	return runner{cred: nobody}
}

func lookupUser(name string) (*syscall.Credential, error) {
	usr, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(usr.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(usr.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// own gives the user every file under dir.
func (u runner) own(t *testing.T, dir string) {
	t.Helper()
	if u.cred == nil {
		return
	}
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(u.cred.Uid), int(u.cred.Gid))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seedBuildCache makes dst the user's build cache, holding hard links to
// the files of the test's build cache src: the user reads them and adds
// its own in directories of its own; src's files keep their owner.
func (u runner) seedBuildCache(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-al", src, dst).CombinedOutput(); err != nil {
		// Another file system: no links, and the user's cache starts empty.
		t.Logf("seed the build cache: %v\n%s", err, out)
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// trim.txt is rewritten by the cache's owner: the user's own copy.
	if raw, err := os.ReadFile(filepath.Join(src, "trim.txt")); err == nil {
		os.Remove(filepath.Join(dst, "trim.txt"))
		if err := os.WriteFile(filepath.Join(dst, "trim.txt"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if u.cred == nil {
		return
	}
	err := filepath.WalkDir(filepath.Dir(dst), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() && d.Name() != "trim.txt" {
			return err
		}
		return os.Lchown(path, int(u.cred.Uid), int(u.cred.Gid))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copyTools copies into the user cache directory cache the aws-lambda-rie
// and gofakes3 that dev builds once into the test's: pinned versions, the
// same binary for every user.
func (u runner) copyTools(t *testing.T, cache string) {
	t.Helper()
	own, err := os.UserCacheDir()
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Join(cache, "hookinbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"aws-lambda-rie", "gofakes3"} {
		built, _ := filepath.Glob(filepath.Join(own, "hookinbox", tool, "*", tool))
		for _, bin := range built {
			rel, _ := filepath.Rel(own, bin)
			dst := filepath.Join(cache, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("cp", "-p", bin, dst).CombinedOutput(); err != nil {
				t.Fatalf("copy %s: %v\n%s", bin, err, out)
			}
		}
	}
	u.own(t, filepath.Join(cache, "hookinbox"))
}

// command returns script, to run with sh -e in dir as the user with only
// env, in a process group of its own that ctx's end kills.
func (u runner) command(ctx context.Context, dir string, env []string, script string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", "-ec", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// run runs script with sh -e in dir as the user, with only env.
func (u runner) run(ctx context.Context, t *testing.T, dir string, env []string, script string) (string, error) {
	t.Helper()
	cmd := u.command(ctx, dir, env, script)
	begin := time.Now()
	out, err := cmd.CombinedOutput()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	t.Logf("in %s (%v, %v of CPU):\n%s", dir, time.Since(begin).Round(time.Second), cpu.Round(time.Second), script)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w: the test's time is up (%w)", err, ctx.Err())
	}
	return string(out), err
}

// writeProxy writes a module proxy (GOPROXY=file://dir) that serves the
// committed tree of the checkout at root as hookinbox@main.
func writeProxy(t *testing.T, root, dir string) {
	t.Helper()
	head, err := exec.Command("git", "-C", root, "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	hash, secs, _ := strings.Cut(strings.TrimSpace(string(head)), " ")
	unix, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(unix, 0).UTC()
	version := module.PseudoVersion("v0", "", at, hash[:12])
	gomod, err := exec.Command("git", "-C", root, "show", "HEAD:go.mod").Output()
	if err != nil {
		t.Fatalf("git show HEAD:go.mod: %v", err)
	}
	atV := filepath.Join(dir, hookinbox, "@v")
	if err := os.MkdirAll(atV, 0o755); err != nil {
		t.Fatal(err)
	}
	// The committed tree, as git archive writes it (a worktree's .git is
	// a file, which modzip.CreateFromVCS does not take).
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("sh", "-ec", `git -C "$1" archive HEAD | tar -x -C "$2"`, "sh", root, tree)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive: %v\n%s", err, out)
	}
	var zip bytes.Buffer
	if err := modzip.CreateFromDir(&zip, module.Version{Path: hookinbox, Version: version}, tree); err != nil {
		t.Fatalf("zip the checkout: %v", err)
	}
	if err := os.RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": at})
	for name, body := range map[string][]byte{
		"list": []byte(version + "\n"), "main.info": info, version + ".info": info,
		version + ".mod": gomod, version + ".zip": zip.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(atV, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// copyExample copies the example's business into mod as adopting.md says,
// with its import path changed to path.
func copyExample(t *testing.T, example, mod, path string) {
	t.Helper()
	for _, name := range []string{"crm", "warehouse", "functions", "cmd", "testdata", "business.yaml", "Makefile", "samconfig.toml"} {
		err := filepath.WalkDir(filepath.Join(example, name), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(example, p)
			dst := filepath.Join(mod, rel)
			if d.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.HasSuffix(p, ".go") {
				raw = bytes.ReplaceAll(raw, []byte("example.com/custom-business"), []byte(path))
			}
			return os.WriteFile(dst, raw, 0o644)
		})
		if err != nil {
			t.Fatalf("copy the example's %s: %v", name, err)
		}
	}
}

// repoRoot returns the checkout's root: the directory above holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatal(fmt.Errorf("no go.mod above %s", wd))
		}
	}
}
