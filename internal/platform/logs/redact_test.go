package logs_test

import (
	"errors"
	"testing"

	"github.com/hookinbox/hookinbox/internal/platform/logs"
)

func TestEmails(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"SES rejection", "ses: MessageRejected: Email address is not verified. The following identities failed the check in region EU-WEST-1: jane.doe+shop@example.co.uk",
			"ses: MessageRejected: Email address is not verified. The following identities failed the check in region EU-WEST-1: [email]"},
		{"angle brackets", "550 5.1.1 <bob@mail.example.com>: Recipient address rejected", "550 5.1.1 <[email]>: Recipient address rejected"},
		{"quoted, two addresses", `to "a@x.io" and 'B_C@y.example'`, `to "[email]" and '[email]'`},
		{"in a URL query", "GET /v1/customers?email=jo%40x.com&x=y@z.org", "GET /v1/customers?email=[email]&x=[email]"},
		{"no address", "dynamodb: ProvisionedThroughputExceededException", "dynamodb: ProvisionedThroughputExceededException"},
		{"an at without a domain", "retry @ 5s; user@localhost", "retry @ 5s; user@localhost"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := logs.RedactEmails(tc.in); got != tc.want {
				t.Errorf("Emails(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestError(t *testing.T) {
	if got := logs.RedactError(nil); got != "" {
		t.Errorf("Error(nil) = %q, want empty", got)
	}
	err := errors.New("send welcome email to ann@example.com: throttled")
	if got, want := logs.RedactError(err), "send welcome email to [email]: throttled"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
}
