package gopay

import (
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// subjects is GoPay's Webhook.Subjects: the payer's email
// (payer.contact.email) of the payment GoPay's API serves; a notification
// names no one.
func subjects(ev webhook.Event) []provider.Subject { return provider.Emails(ev.Raw) }
