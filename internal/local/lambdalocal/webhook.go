package lambdalocal

import (
	"net/url"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookinbox/hookinbox/webhook"
)

// WebhookEvent returns the payload v2 event API Gateway hands the receiver
// for a method request to /webhooks/<provider> (the route
// "<method> /webhooks/{provider}") with headers and body. The body is
// passed as is, not base64-encoded: a test of binary bodies sets
// IsBase64Encoded itself. Tests call a receiver's Handle with it.
func WebhookEvent(provider, method string, headers map[string]string, body []byte) events.APIGatewayV2HTTPRequest {
	req := events.APIGatewayV2HTTPRequest{
		RouteKey:       method + " /webhooks/{provider}",
		RawPath:        "/webhooks/" + provider,
		Headers:        headers,
		PathParameters: map[string]string{"provider": provider},
		Body:           string(body),
	}
	req.RequestContext.HTTP.Method = method
	req.RequestContext.HTTP.Path = req.RawPath
	return req
}

// GoPayNotification returns the event of GoPay's notification,
// GET /webhooks/gopay?id=<id>: its route has a fixed path, so the event has
// no {provider} parameter.
func GoPayNotification(id string) events.APIGatewayV2HTTPRequest {
	req := WebhookEvent("gopay", "GET", map[string]string{}, nil)
	req.RouteKey, req.PathParameters = "GET /webhooks/gopay", nil
	req.QueryStringParameters = map[string]string{"id": id}
	return req
}

// Delivery returns the event API Gateway hands the receiver for r, a
// delivery to /webhooks/<provider> as provider.Provider.Sign builds it.
func Delivery(provider string, r webhook.Request) events.APIGatewayV2HTTPRequest {
	req := WebhookEvent(provider, r.Method, r.Header, r.Body)
	if len(r.Query) > 0 {
		req.QueryStringParameters = r.Query
		q := url.Values{}
		for k, v := range r.Query {
			q.Set(k, v)
		}
		req.RawQueryString = q.Encode()
	}
	return req
}
