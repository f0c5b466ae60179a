package logs

// Redaction removes personal data from text before it is recorded: a log
// line, an inbox item's last_error, a DLQ message attribute, a reconciler
// note. Error text from outside systems carries it (SES names the
// recipient it refused), and none of those places needs it: the key of the
// event leads to the payload, which is kept where it belongs.
//
// RedactEmails and RedactError are pure and safe for concurrent use.

import (
	"regexp"
	"strings"
)

// email matches an address as error text spells one: a local part, an @
// (or %40, URL-encoded), and a domain with a dot. A false match costs a
// word of an error message, a miss costs an address in a log.
var email = regexp.MustCompile(`[A-Za-z0-9._%+-]+(?:@|%40)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+`)

// RedactedEmail replaces each address.
const RedactedEmail = "[email]"

// RedactEmails returns s with every email address replaced by RedactedEmail.
func RedactEmails(s string) string {
	if !strings.Contains(s, "@") && !strings.Contains(s, "%40") {
		return s
	}
	return email.ReplaceAllString(s, RedactedEmail)
}

// RedactError returns err's text with every email address replaced by
// RedactedEmail, or "" for a nil err.
func RedactError(err error) string {
	if err == nil {
		return ""
	}
	return RedactEmails(err.Error())
}
