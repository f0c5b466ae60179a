package github

import (
	"encoding/json"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// subjects is GitHub's Webhook.Subjects: the sender's login and
// every email address (a push's commit authors, ...).
func subjects(ev webhook.Event) []provider.Subject {
	var e struct {
		Sender struct {
			Login string `json:"login"`
		} `json:"sender"`
	}
	if json.Unmarshal(ev.Raw, &e) != nil {
		return nil
	}
	return append([]provider.Subject{provider.CustomerSubject(Name, e.Sender.Login)}, provider.Emails(ev.Raw)...)
}
