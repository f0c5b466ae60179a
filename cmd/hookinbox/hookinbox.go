// Command hookinbox runs hookinbox locally and talks to a running stack
// (`hookinbox help`). It is package cli's Main with hookinbox's providers
// and one command of the example shop's own, state; a team with
// providers or commands of its own runs its own main calling cli.Main.
package main

import "github.com/hookinbox/hookinbox/cli"

func main() { cli.Main(options()) }

// options are what hookinbox's own command adds to package cli's: the
// example shop's state.
func options() cli.Options {
	return cli.Options{Commands: []cli.Command{
		{Name: "state", Summary: "show the example shop's state (entitlements, emails, invoices)", Run: cmdState},
	}}
}
