package devstack

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// toxiproxy's module and server package, pinned by a tool line in go.mod.
const (
	toxiproxyModule  = "github.com/Shopify/toxiproxy/v2"
	toxiproxyPackage = "github.com/Shopify/toxiproxy/v2/cmd/server"
)

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

// StartToxiproxy builds (once, see toolBinary) and starts the pinned
// toxiproxy server on a free 127.0.0.1 port, and returns once its API
// answers. opts.Root is the repository root (its go.mod pins the version);
// empty means the one above the working directory.
func StartToxiproxy(ctx context.Context, opts Options) (*Toxiproxy, error) {
	root, err := RepoRoot(opts.Root)
	if err != nil {
		return nil, err
	}
	bin, err := toolBinary(ctx, root, toxiproxyModule, toxiproxyPackage)
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
