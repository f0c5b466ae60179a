// Package envconfig reads a function's own settings from its environment
// as a provider reads its own (provider.Settings): every missing or
// invalid key is reported in one error, so a misconfigured deployment is
// fixed in one go rather than one cold start per key.
package envconfig

import "github.com/hookinbox/hookinbox/provider"

// Reader is provider.Settings: it reads keys through a get function and
// remembers what was missing or invalid.
type Reader = provider.Settings

// New returns a Reader over get (os.Getenv in main, a map in tests).
func New(get func(string) string) *Reader { return (&provider.Env{Getenv: get}).Settings() }

// Split splits a comma-separated list (several secrets in one variable,
// parameter or secret value), trimming spaces and dropping empty entries;
// it returns nil when nothing is left.
func Split(s string) []string { return New(func(string) string { return s }).List("") }
