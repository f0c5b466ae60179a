package cli

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/hookinbox/hookinbox/internal/providers/standard"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

// checkForward reports a --forward URL or --forward-secret the local
// processor could not deliver with, as a usage error.
func checkForward(forward, secret string) error {
	if forward != "" {
		c := destination.Config{Name: pipeline.ForwardName, URL: forward, Events: []string{"*"}, Secret: pipeline.SecretARN("check")}
		if err := destination.Validate([]destination.Config{c}, true); err != nil {
			return usagef("--forward: %v", err)
		}
	}
	v := standard.Verifier{Secrets: envconfig.Split(secret)}
	if err := v.Validate(); err != nil || strings.Contains(secret, "whpk_") {
		return usagef("--forward-secret: want whsec_ secrets, comma-separated")
	}
	return nil
}

// devDestinations returns the destinations of the stack's template, and
// an error naming one the local stack cannot deliver to (a bus or a URL
// off this machine, without --forward).
func devDestinations(st *pipeline.Stack, forward string) ([]destination.Config, error) {
	dests, err := st.Destinations()
	if err != nil {
		return nil, err
	}
	for _, d := range dests {
		if _, ok := pipeline.LocalURL(d, forward); !ok {
			return nil, fmt.Errorf("destination %s (%s): %w", d.Name, d.URL+d.Bus, pipeline.ErrNotLocal)
		}
	}
	return dests, nil
}

// printDestinations tells, below the banner, where the local processor
// delivers the events of each destination of the template (dests) and of
// --forward, with what secret, and the sink command that receives and
// verifies them.
func printDestinations(w io.Writer, dests []destination.Config, forward, secret string) {
	if forward != "" {
		dests = append(dests, destination.Config{Name: pipeline.ForwardName, URL: forward, Events: []string{"*"}})
	}
	if len(dests) == 0 {
		return
	}
	fmt.Fprintf(w, "Destinations: the events each matches are delivered, signed with %s (local only):\n", secret)
	var sinkAddr string
	for _, d := range dests {
		local, _ := pipeline.LocalURL(d, forward)
		target := local
		if d.IsBus() {
			target += " (in place of the EventBridge bus " + d.Bus + ")"
		} else if d.URL != local {
			target += " (in place of " + d.URL + ")"
		}
		fmt.Fprintf(w, "  %-12s %s   %s\n", d.Name, target, strings.Join(d.Events, ", "))
		if addr, ok := loopbackAddr(local); ok && sinkAddr == "" {
			sinkAddr = addr
		}
	}
	if sinkAddr != "" {
		fmt.Fprintln(w, "Receive and verify them in another terminal:")
		fmt.Fprintf(w, "  %s sink --addr %s --secret %s\n", selfCommand(), sinkAddr, secret)
	}
	fmt.Fprintln(w)
}

// loopbackAddr returns the host:port of an http:// URL on this machine.
func loopbackAddr(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return "", false
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", false
	}
	return net.JoinHostPort(host, port), true
}
