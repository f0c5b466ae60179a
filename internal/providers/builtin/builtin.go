// Package builtin lists the providers hookinbox ships: the one registry
// the functions iterate (Registry), and the senders of their test
// deliveries that `hookinbox send`, chaos and hookinboxtest iterate
// (Senders), in the same order. Adding a provider to hookinbox is a line
// in each.
package builtin

import (
	"github.com/hookinbox/hookinbox/internal/providers/adyen"
	"github.com/hookinbox/hookinbox/internal/providers/github"
	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/internal/providers/paddle"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
)

// Senders returns the senders of the test deliveries of the providers
// hookinbox ships, in the order they are listed to a person; the
// functions never call it, so the Lambda bootstraps leave it out.
func Senders() []sample.Sender {
	return []sample.Sender{
		stripe.Sender(),
		github.Sender(),
		shopify.Sender(),
		standard.Sender(),
		adyen.Sender(),
		gopay.Sender(),
		paddle.Sender(),
		mollie.Sender(),
	}
}

// Registry returns the registry of hookinbox's providers and extra, a
// team's own; a name given twice is an error.
func Registry(extra ...provider.Provider) (*provider.Registry, error) {
	return provider.NewRegistry(append(providers(), extra...)...)
}

// providers are the providers hookinbox ships, in Senders' order.
func providers() []provider.Provider {
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
