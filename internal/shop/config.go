package shop

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
)

// Config is the shop's configuration, filled in by main from the
// environment.
type Config struct {
	// Table is the DynamoDB table of the shop's records (pk, sk strings).
	Table string
	// MailFrom is the verified SES identity welcome emails are sent from.
	MailFrom string
}

// Validate reports every missing or malformed setting in one error.
func (c Config) Validate() error {
	var problems []string
	if c.Table == "" {
		problems = append(problems, "no table")
	}
	switch {
	case c.MailFrom == "":
		problems = append(problems, "no mail-from address")
	default:
		if _, err := mail.ParseAddress(c.MailFrom); err != nil {
			problems = append(problems, fmt.Sprintf("mail-from address %q: %v", c.MailFrom, err))
		}
	}
	if len(problems) > 0 {
		return errors.New("shop config: " + strings.Join(problems, "; "))
	}
	return nil
}
