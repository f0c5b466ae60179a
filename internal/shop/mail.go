package shop

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// mailer sends email; *sesv2.Client is one.
type mailer interface {
	SendEmail(ctx context.Context, in *sesv2.SendEmailInput, opts ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error)
}

// Email tag names the shop sets on every message it sends.
const (
	TagIdempotencyKey = "hookinbox-idempotency-key"
	tagTemplate       = "hookinbox-template"
)

const (
	welcomeSubject = "Welcome to the shop"
	welcomeBody    = "Thank you for your order. Your access is now active.\n"
)

// sendWelcome sends the welcome email to to and returns SES's message ID.
// SES has no idempotency key, so the email is an at-most-once effect
// (effects.AtMostOnce): the request is made once, without the SDK's
// retries (a retry after a lost answer could send it twice), and an error
// that is SES's answer is marked effects.NotDone (SES refused it; the
// event's retry may send it), while any other error (a timeout, a reset
// connection) leaves it unknown. The key also goes in a message tag, so a
// person resolving an unknown outcome finds the email in SES's event
// stream.
func (s *Shop) sendWelcome(ctx context.Context, to, idempotencyKey string) (string, error) {
	utf8 := aws.String("UTF-8")
	out, err := s.mail.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: &s.cfg.MailFrom,
		Destination:      &sestypes.Destination{ToAddresses: []string{to}},
		Content: &sestypes.EmailContent{Simple: &sestypes.Message{
			Subject: &sestypes.Content{Data: aws.String(welcomeSubject), Charset: utf8},
			Body:    &sestypes.Body{Text: &sestypes.Content{Data: aws.String(welcomeBody), Charset: utf8}},
		}},
		EmailTags: []sestypes.MessageTag{
			{Name: aws.String(TagIdempotencyKey), Value: aws.String(TagValue(idempotencyKey))},
			{Name: aws.String(tagTemplate), Value: aws.String(templateWelcome)},
		},
	}, func(o *sesv2.Options) { o.RetryMaxAttempts = 1 })
	if err != nil {
		// The address stays out of the error: errors are logged.
		err = fmt.Errorf("send welcome email: %w", classifySES(err))
		if answeredBySES(err) {
			err = effects.NotDone(err)
		}
		return "", err
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

// answeredBySES reports whether err is an answer of SES's (a refusal, a
// throttle, a server fault): the email was not accepted. A network error
// or a timeout is not: the email may have gone out.
func answeredBySES(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr)
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
