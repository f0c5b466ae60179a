package lambdalocal

import (
	"bytes"
	"context"
	"net/http"
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
		req.RawQueryString = encodeQuery(r.Query)
	}
	return req
}

// encodeQuery returns the query string of q.
func encodeQuery(q map[string]string) string {
	vs := url.Values{}
	for k, v := range q {
		vs.Set(k, v)
	}
	return vs.Encode()
}

// HTTPRequest returns the HTTP request that delivers r, as
// provider.Provider.Sign builds it, to the webhook URL u.
func HTTPRequest(ctx context.Context, u string, r webhook.Request) (*http.Request, error) {
	if len(r.Query) > 0 {
		u += "?" + encodeQuery(r.Query)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	return req, nil
}
