package processor_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestRecordedErrorsCarryNoEmailAddress(t *testing.T) {
	p := pipelinetest.New(t)
	// SES refuses the welcome email permanently, naming the recipient in
	// its error text, as it does.
	key, body := pipelinetest.Checkout("privacy", 1, time.Now().Add(-time.Minute))
	const address = "buyer1@example.com"
	p.SES.FailFor(address, http.StatusBadRequest)
	p.Deliver(t, body)
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{key}) })

	it, err := p.Inbox.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if it.Status != inbox.Dead || !strings.Contains(it.LastError, "identities failed the check") {
		t.Fatalf("item: %s, last_error %q; want DEAD with SES's reason", it.Status, it.LastError)
	}
	reason := p.DLQReasons(t)[key]
	logText := p.Logs.String()
	for what, text := range map[string]string{"last_error": it.LastError, "DLQ reason attribute": reason, "log": logText} {
		if strings.Contains(text, address) {
			t.Errorf("%s carries the address: %q", what, text)
		}
	}
	if !strings.Contains(it.LastError, logs.RedactedEmail) || reason != it.LastError {
		t.Errorf("last_error %q, DLQ reason %q; want the same reason with %s in place of the address", it.LastError, reason, logs.RedactedEmail)
	}
}
