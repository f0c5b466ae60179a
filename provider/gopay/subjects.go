package gopay

import (
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Subjects implements provider.SubjectFinder: the payer's email
// (payer.contact.email) of the payment GoPay's API serves; a notification
// names no one.
func (Provider) Subjects(ev webhook.Event) []provider.Subject { return provider.Emails(ev.Raw) }
