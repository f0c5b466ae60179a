package provider

import (
	"fmt"
	"slices"
)

// Registry is the providers a function speaks, each name once, in the
// order given. Functions iterate it and name no provider. It is only
// read once made, and safe for concurrent use.
type Registry struct {
	list []Provider
}

// NewRegistry returns the registry of ps; a name that is not valid or
// given twice is an error.
func NewRegistry(ps ...Provider) (*Registry, error) {
	r := &Registry{}
	for _, p := range ps {
		if err := checkName(p.Name()); err != nil {
			return nil, err
		}
		if _, dup := r.Lookup(p.Name()); dup {
			return nil, fmt.Errorf("provider %q registered twice", p.Name())
		}
		r.list = append(r.list, p)
	}
	return r, nil
}

// All returns the providers in order.
func (r *Registry) All() []Provider { return slices.Clone(r.list) }

// Lookup returns the provider named name.
func (r *Registry) Lookup(name string) (Provider, bool) {
	for _, p := range r.list {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// Names returns the providers' names in order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.list))
	for i, p := range r.list {
		names[i] = p.Name()
	}
	return names
}

// TypeBounded reports whether provider's event types form a set no one
// without its signing secret can add to: the provider is registered and
// its type is signed or fixed (not Webhook.TypeUnsigned). It bounds the
// EventType metric dimension where the business is not known.
func (r *Registry) TypeBounded(provider, _ string) bool {
	p, ok := r.Lookup(provider)
	return ok && !p.Webhook().TypeUnsigned
}
