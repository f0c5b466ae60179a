package provider

import "testing"

// TestParseSubject: a person names a subject as <provider>:<id> or
// email:<address>; addresses are compared in lower case.
func TestParseSubject(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"stripe:cus_1", "stripe:cus_1", true},
		{" email:Jenny@Example.COM ", "email:jenny@example.com", true},
		{"shopify:115310627314723954", "shopify:115310627314723954", true},
		{"email:nobody", "", false},
		{"cus_1", "", false},
		{"Stripe:cus_1", "", false},
		{"stripe:", "", false},
	}
	for _, tt := range tests {
		got, err := ParseSubject(tt.in)
		if string(got) != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseSubject(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
