package devstack

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// toxiproxyTool is toxiproxy's server as go.mod's tool line names it: go
// tool runs the last element of the package path.
const toxiproxyTool = "server"

// Toxiproxy is a running toxiproxy server (Shopify's fault proxy, pinned
// with a tool line in go.mod) on 127.0.0.1, and a client of its API.
// Proxies put in front of the emulators or the stand-ins inject latency,
// timeouts and connection resets on command. Safe for concurrent use.
type Toxiproxy struct {
	// URL is the server's API endpoint.
	URL    string
	Client *toxiproxy.Client

	proc *child
}

// StartToxiproxy builds (once, through go tool) and starts the pinned
// toxiproxy server on a free 127.0.0.1 port, and returns once its API
// answers. opts.Root is the repository root (its go.mod pins the version);
// empty means the one above the working directory.
func StartToxiproxy(ctx context.Context, opts Options) (*Toxiproxy, error) {
	root, err := repoRoot(opts.Root)
	if err != nil {
		return nil, err
	}
	bin, err := toolBinary(ctx, root, toxiproxyTool)
	if err != nil {
		return nil, fmt.Errorf("start toxiproxy: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("start toxiproxy: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", strconv.Itoa(port))
	proc, err := startChild(cmd, opts.Stdout, opts.Stderr)
	if err != nil {
		return nil, fmt.Errorf("start toxiproxy: %w", err)
	}
	t := &Toxiproxy{URL: fmt.Sprintf("http://127.0.0.1:%d", port), proc: proc}
	if err := waitHTTP(ctx, t.URL+"/version", proc); err != nil {
		_ = t.Stop()
		return nil, fmt.Errorf("start toxiproxy: %w", err)
	}
	t.Client = toxiproxy.NewClient(t.URL)
	return t, nil
}

// Proxy creates the proxy name in front of the HTTP endpoint upstream
// (such as http://127.0.0.1:41235) on a free 127.0.0.1 port, and returns
// it and the URL to use instead of upstream.
func (t *Toxiproxy) Proxy(name, upstream string) (*toxiproxy.Proxy, string, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		return nil, "", fmt.Errorf("toxiproxy %s: upstream %q is not a URL", name, upstream)
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	p, err := t.Client.CreateProxy(name, listen, u.Host)
	if err != nil {
		return nil, "", fmt.Errorf("toxiproxy: create %s: %w", name, err)
	}
	return p, u.Scheme + "://" + listen + strings.TrimSuffix(u.Path, "/"), nil
}

// Stop stops the server and waits for it to exit. It is idempotent.
func (t *Toxiproxy) Stop() error {
	if t == nil || t.proc == nil {
		return nil
	}
	if err := t.proc.stop(3 * time.Second); err != nil {
		return fmt.Errorf("stop toxiproxy: %w", err)
	}
	return nil
}

var tools struct {
	sync.Mutex
	paths map[string]string
}

// toolBinary returns the path of a tool pinned in root's go.mod, built by
// `go tool -n` (which caches it) the first time.
func toolBinary(ctx context.Context, root, name string) (string, error) {
	tools.Lock()
	defer tools.Unlock()
	if p := tools.paths[name]; p != "" {
		return p, nil
	}
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", name)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return "", fmt.Errorf("go tool -n %s: %w\n%s", name, err, stderr)
	}
	if tools.paths == nil {
		tools.paths = map[string]string{}
	}
	tools.paths[name] = strings.TrimSpace(string(out))
	return tools.paths[name], nil
}
