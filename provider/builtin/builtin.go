// Package builtin lists the providers hookinbox ships: the one registry
// the functions, `hookinbox send`, chaos and hookinboxtest iterate.
// Adding a provider to hookinbox is one line here.
package builtin

import (
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/adyen"
	"github.com/hookinbox/hookinbox/provider/github"
	"github.com/hookinbox/hookinbox/provider/gopay"
	"github.com/hookinbox/hookinbox/provider/mollie"
	"github.com/hookinbox/hookinbox/provider/paddle"
	"github.com/hookinbox/hookinbox/provider/shopify"
	"github.com/hookinbox/hookinbox/provider/standard"
	"github.com/hookinbox/hookinbox/provider/stripe"
)

// Providers returns the providers hookinbox ships, in the order they are
// listed to a person.
func Providers() []provider.Provider {
	return []provider.Provider{
		stripe.Provider{},
		github.Provider{},
		shopify.Provider{},
		standard.Provider{},
		adyen.Provider{},
		gopay.Provider{},
		paddle.Provider{},
		mollie.Provider{},
	}
}

// Registry returns the registry of hookinbox's providers and extra, a
// team's own; a name given twice is an error.
func Registry(extra ...provider.Provider) (*provider.Registry, error) {
	return provider.NewRegistry(append(Providers(), extra...)...)
}
