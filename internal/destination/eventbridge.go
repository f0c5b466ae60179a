package destination

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"

	"github.com/hookinbox/hookinbox/webhook"
)

// MaxEntrySize is the largest EventBridge entry PutEvents takes, in
// bytes, counted as EventBridge counts it (entrySize). A bigger event is
// not sent: it is parked (ErrTooLarge), as retrying cannot shrink it.
const MaxEntrySize = 256 * 1024

// eventBridgeAPI lists the EventBridge call a bus destination makes
// (*eventbridge.Client).
type eventBridgeAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// busDestination puts events on one EventBridge bus.
type busDestination struct {
	cfg    Config
	client eventBridgeAPI
}

// busSource returns the EventBridge source of provider's events,
// "hookinbox.<provider>".
func busSource(provider string) string { return "hookinbox." + provider }

// putEntry returns the PutEvents entry of ev's body b on bus: source
// "hookinbox.<provider>", detail-type the event's type, detail the body
// (the provider's bytes unchanged in it), time the provider's creation
// time when it has one.
func putEntry(bus string, ev webhook.Event, b body) types.PutEventsRequestEntry {
	e := types.PutEventsRequestEntry{
		EventBusName: aws.String(bus),
		Source:       aws.String(busSource(ev.Provider)),
		DetailType:   aws.String(ev.Type),
		Detail:       aws.String(b.String()),
	}
	if !ev.Created.IsZero() {
		e.Time = aws.Time(ev.Created)
	}
	return e
}

// entrySize is the size of ev's entry with a detail of detail bytes, as
// EventBridge counts it against MaxEntrySize: 14 bytes for a time, and
// the bytes of its source, detail-type and detail.
func entrySize(ev webhook.Event, detail int) int {
	n := len(busSource(ev.Provider)) + len(ev.Type) + detail
	if !ev.Created.IsZero() {
		n += 14
	}
	return n
}

// send puts the event on the bus once and classifies the answer. An
// event too large is refused before its entry is built.
func (d *busDestination) send(ctx context.Context, ev webhook.Event, b body) (answer, error) {
	if size := entrySize(ev, b.size()); size > MaxEntrySize {
		a := answer{Text: fmt.Sprintf("event too large for EventBridge: %d bytes, the limit is %d", size, MaxEntrySize)}
		return a, &deliveryError{Destination: d.cfg.Name, Answer: a, kind: ErrTooLarge}
	}
	entry := putEntry(d.cfg.Bus, ev, b)
	out, err := d.client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry}})
	if err != nil {
		a := answer{Text: "PutEvents: " + apiText(err)}
		if busRetries(err) {
			return a, failure(d.cfg.Name, a, retried, err)
		}
		return a, failure(d.cfg.Name, a, refused, err)
	}
	if out.FailedEntryCount == 0 && len(out.Entries) == 1 {
		return answer{Text: "put as " + aws.ToString(out.Entries[0].EventId)}, nil
	}
	code, msg := "no result", ""
	if len(out.Entries) == 1 {
		code, msg = aws.ToString(out.Entries[0].ErrorCode), aws.ToString(out.Entries[0].ErrorMessage)
	}
	a := answer{Text: fmt.Sprintf("PutEvents entry failed: %s %s", code, msg)}
	if code == "InternalFailure" || code == "ThrottlingException" || code == "no result" {
		return a, failure(d.cfg.Name, a, retried, nil)
	}
	return a, failure(d.cfg.Name, a, refused, nil)
}

// busRetries reports whether a PutEvents error may pass: no answer, a
// throttle, or a 5xx. A refusal (no such bus, access denied, a validation
// error) parks the event.
func busRetries(err error) bool {
	var answered interface{ HTTPStatusCode() int }
	if !errors.As(err, &answered) || answered.HTTPStatusCode() == 0 || answered.HTTPStatusCode() >= 500 || answered.HTTPStatusCode() == 429 {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		_, throttled := retry.DefaultThrottleErrorCodes[api.ErrorCode()]
		return throttled
	}
	return false
}

// apiText is an AWS error's code, or its text when it has none.
func apiText(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return err.Error()
}
