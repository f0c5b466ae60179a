package stripe_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
)

// TestSampleEmailSetsEveryAddress: send's --email sets every email
// address of every Stripe sample that has one (a checkout's customer,
// a customer, an invoice's customer_email, a charge's billing and receipt
// addresses, ...): the event then names that person alone, as the
// subject index reads it, and no field keeps the sample's address.
func TestSampleEmailSetsEveryAddress(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "stripe", "*.json"))
	variants, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "stripe", "variants", "*.json"))
	files = append(files, variants...)
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/stripe: %v, %v", files, err)
	}
	const email = "jane@example.com"
	with := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			before := provider.Emails(body)
			ev, err := stripe.Sender().Sample(sample.Event{Body: body, File: filepath.Base(f), Fresh: true, Options: map[string]string{"email": email}})
			if err != nil {
				t.Fatal(err)
			}
			got := provider.Emails(ev.Body)
			if len(before) == 0 {
				if len(got) != 0 {
					t.Errorf("a sample without an address has %v after --email", got)
				}
				return
			}
			with++
			if want := provider.EmailSubject(email); len(got) == 0 || slices.ContainsFunc(got, func(s provider.Subject) bool { return s != want }) {
				t.Errorf("the sample names %v after --email; want %s alone", got, want)
			}
			for _, s := range before {
				if addr := strings.TrimPrefix(string(s), "email:"); strings.Contains(string(ev.Body), addr) {
					t.Errorf("the sample keeps the address %s", addr)
				}
			}
		})
	}
	if with < 4 {
		t.Errorf("%d samples with an email address, want the checkout, customer, invoice, charge and payment intent", with)
	}
}
