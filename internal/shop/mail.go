package shop

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	"github.com/hookinbox/hookinbox/webhook"
)

// Mailer sends email; *sesv2.Client is one.
type Mailer interface {
	SendEmail(ctx context.Context, in *sesv2.SendEmailInput, opts ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error)
}

// Email tag names the shop sets on every message it sends.
const (
	TagIdempotencyKey = "hookinbox-idempotency-key"
	TagTemplate       = "hookinbox-template"
)

const (
	welcomeSubject = "Welcome to the shop"
	welcomeBody    = "Thank you for your order. Your access is now active.\n"
)

// sendWelcome sends the welcome email to to and returns SES's message ID.
// SES has no idempotency key: the key goes in a message tag, so a duplicate
// sent in the window between a successful send and the ledger record can be
// recognised in SES's event stream.
func (s *Shop) sendWelcome(ctx context.Context, to, idempotencyKey string) (string, error) {
	utf8 := ptr("UTF-8")
	out, err := s.mail.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: &s.cfg.MailFrom,
		Destination:      &sestypes.Destination{ToAddresses: []string{to}},
		Content: &sestypes.EmailContent{Simple: &sestypes.Message{
			Subject: &sestypes.Content{Data: ptr(welcomeSubject), Charset: utf8},
			Body:    &sestypes.Body{Text: &sestypes.Content{Data: ptr(welcomeBody), Charset: utf8}},
		}},
		EmailTags: []sestypes.MessageTag{
			{Name: ptr(TagIdempotencyKey), Value: ptr(TagValue(idempotencyKey))},
			{Name: ptr(TagTemplate), Value: ptr(templateWelcome)},
		},
	})
	if err != nil {
		// The address stays out of the error: errors are logged.
		return "", fmt.Errorf("send welcome email: %w", classifySES(err))
	}
	if out.MessageId == nil {
		return "", nil
	}
	return *out.MessageId, nil
}

// TagValue returns s as an SES message tag value, which may hold only ASCII
// letters, digits, '_', '-', '.' and '@': every other byte becomes '.'.
// Idempotency keys ("hookinbox:stripe#evt_1:welcome-email") keep their
// meaning, since provider names and event IDs hold none of ':', '#' or '.'.
func TagValue(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-', r == '.', r == '@':
			return r
		}
		return '.'
	}, s)
}

// classifySES marks SES's refusals permanent: a client fault other than
// throttling (a rejected message, an unverified sender, a paused account)
// will not go away by retrying, so the event is parked with the reason.
// Throttling, server faults and network errors stay transient.
func classifySES(err error) error {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorFault() != smithy.FaultClient {
		return err
	}
	switch apiErr.ErrorCode() {
	case "TooManyRequestsException", "LimitExceededException", "ThrottlingException":
		return err
	}
	return webhook.Permanent(err)
}
