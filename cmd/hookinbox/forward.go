package main

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/hookinbox/hookinbox/provider/standard"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

// checkForward reports a --forward URL or --forward-secret the local
// processor could not deliver with, as a usage error.
func checkForward(forward, secret string) error {
	if forward != "" {
		c := destination.Config{Name: pipeline.ForwardName, URL: forward, Events: []string{"*"}, Secret: pipeline.SecretARN("check")}
		if err := destination.Validate([]destination.Config{c}); err != nil {
			return usagef("--forward: %v", err)
		}
	}
	v := standard.Verifier{Secrets: envconfig.Split(secret)}
	if err := v.Validate(); err != nil || strings.Contains(secret, "whpk_") {
		return usagef("--forward-secret: want whsec_ secrets, comma-separated")
	}
	return nil
}

// printDestinations tells, below the banner, where the local processor
// delivers each event, with what secret, and the sink command that
// receives and verifies them.
func printDestinations(w io.Writer, dests []destination.Config, secret string) {
	if len(dests) == 0 {
		return
	}
	fmt.Fprintf(w, "Destinations: every event they match is delivered, signed with %s (local only):\n", secret)
	var local string
	for _, d := range dests {
		target := d.URL
		if d.IsBus() {
			target = "EventBridge bus " + d.Bus + " (not emulated locally)"
		}
		fmt.Fprintf(w, "  %-12s %s   %s\n", d.Name, target, strings.Join(d.Events, ", "))
		if addr, ok := loopbackAddr(d.URL); ok && local == "" {
			local = addr
		}
	}
	if local != "" {
		fmt.Fprintln(w, "Receive and verify them in another terminal:")
		fmt.Fprintf(w, "  %s sink --addr %s --secret %s\n", selfCommand(), local, secret)
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
