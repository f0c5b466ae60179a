package destination

import "testing"

func TestMatches(t *testing.T) {
	tests := []struct {
		patterns        []string
		provider, etype string
		want            bool
	}{
		{[]string{"*"}, "stripe", "invoice.paid", true},
		{[]string{"stripe:checkout.session.*"}, "stripe", "checkout.session.completed", true},
		{[]string{"stripe:checkout.session.*"}, "stripe", "checkout.sessions", false},
		{[]string{"stripe:checkout.session.*"}, "github", "checkout.session.completed", false},
		{[]string{"shopify:orders/*"}, "shopify", "orders/paid", true},
		{[]string{"shopify:orders/*"}, "shopify", "customers/create", false},
		{[]string{"*:*.paid"}, "paddle", "transaction.paid", true},
		{[]string{"stripe:*"}, "stripe", "v1.billing.meter.error_report_triggered", true},
		{[]string{"stripe:invoice.paid"}, "stripe", "invoice.paid.extra", false},
		{[]string{"github:push", "stripe:*"}, "github", "push", true},
		{[]string{"s*e:a*b*c"}, "stripe", "aXbYbc", true},
		{[]string{"s*e:a*b*c"}, "stripe", "aXbYbd", false},
	}
	for _, tt := range tests {
		c := Config{Events: tt.patterns}
		if got := c.matches(tt.provider, tt.etype); got != tt.want {
			t.Errorf("Matches(%q, %q) with %q = %v; want %v", tt.provider, tt.etype, tt.patterns, got, tt.want)
		}
	}
}
