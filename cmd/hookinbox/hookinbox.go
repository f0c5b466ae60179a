// Command hookinbox runs hookinbox locally and talks to a running stack
// (`hookinbox help`). It is package cli's Main with hookinbox's providers;
// a team with providers of its own runs its own main calling cli.Main.
package main

import "github.com/hookinbox/hookinbox/cli"

func main() { cli.Main() }
