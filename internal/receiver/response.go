package receiver

import (
	"errors"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/webhook"
)

// answers is the one table from error kind to HTTP status and the text the
// caller sees. Internal error text never reaches the caller; the reason is
// logged. Anything not listed is our own failure: 500, and the provider
// retries.
var answers = []struct {
	kind   error
	status int
	public string
}{
	{errMethodNotAllowed, http.StatusMethodNotAllowed, "method not allowed"},
	{errUnknownProvider, http.StatusNotFound, "unknown provider"},
	{errTooLarge, http.StatusRequestEntityTooLarge, "payload too large"},
	{webhook.ErrUnauthenticated, http.StatusUnauthorized, "invalid or missing signature"},
	{webhook.ErrMalformed, http.StatusBadRequest, "malformed event"},
	{webhook.ErrBusy, http.StatusServiceUnavailable, "busy: deliver again later"},
}

// statusOf returns the HTTP status and public message for err.
func statusOf(err error) (int, string) {
	for _, a := range answers {
		if errors.Is(err, a.kind) {
			return a.status, a.public
		}
	}
	return http.StatusInternalServerError, "internal error"
}

func errorResponse(status int, public string) events.APIGatewayV2HTTPResponse {
	return jsonResponse(status, `{"error":"`+public+`"}`)
}

func jsonResponse(status int, body string) events.APIGatewayV2HTTPResponse {
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"content-type": "application/json"},
		Body:       body,
	}
}
