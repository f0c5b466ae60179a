// Package standin has stateful stand-ins for the outside services the
// example shop calls: Amazon SES v2's SendEmail and the parts of the Stripe
// API hookinbox uses (invoices, with Idempotency-Key replay; the event
// list, for the reconciler); and for the provider APIs the processor and
// the reconciler read: GoPay's and Mollie's payments, GitHub's hook
// deliveries and Shopify's Admin GraphQL orders. They serve on 127.0.0.1 for tests and for
// `hookinbox dev`, and record what they were asked, so a test can count
// emails sent and invoices created. Safe for concurrent use.
package standin

import (
	"net"
	"net/http"
	"net/http/httptest"
)

// Server is a stand-in listening on 127.0.0.1.
type Server struct {
	*httptest.Server
}

// Serve starts h on a free 127.0.0.1 port, or on addr when given.
func Serve(h http.Handler, addr string) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = l
	s.Start()
	return &Server{s}, nil
}
