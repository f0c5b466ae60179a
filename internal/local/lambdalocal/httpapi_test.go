package lambdalocal_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
)

func TestHTTPAPIPassesPayloadV2(t *testing.T) {
	var got events.APIGatewayV2HTTPRequest
	fn := lambdalocal.InProcess(func(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		got = req
		return events.APIGatewayV2HTTPResponse{StatusCode: 202, Headers: map[string]string{"x-answer": "yes"}, Body: `{"ok":true}`}, nil
	})
	api := &lambdalocal.HTTPAPI{Routes: []lambdalocal.Route{{Method: "POST", Path: "/webhooks/{provider}", Function: fn}}}
	srv := httptest.NewServer(api)
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.URL+"/webhooks/stripe?x=1", strings.NewReader(`{"id":"evt_1"}`))
	req.Header.Set("Stripe-Signature", "t=1,v1=ab")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 || string(body) != `{"ok":true}` || resp.Header.Get("X-Answer") != "yes" {
		t.Errorf("response = %d %s %v", resp.StatusCode, body, resp.Header)
	}
	checks := []struct{ name, got, want string }{
		{"version", got.Version, "2.0"},
		{"routeKey", got.RouteKey, "POST /webhooks/{provider}"},
		{"provider", got.PathParameters["provider"], "stripe"},
		{"signature header (lower case)", got.Headers["stripe-signature"], "t=1,v1=ab"},
		{"body", got.Body, `{"id":"evt_1"}`},
		{"method", got.RequestContext.HTTP.Method, "POST"},
		{"query", got.RawQueryString, "x=1"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if got.IsBase64Encoded {
		t.Error("text body flagged base64")
	}
}

func TestHTTPAPIBinaryBodyIsBase64(t *testing.T) {
	var got events.APIGatewayV2HTTPRequest
	fn := lambdalocal.InProcess(func(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		got = req
		return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
	})
	api := &lambdalocal.HTTPAPI{Routes: []lambdalocal.Route{{Method: "ANY", Path: "/b", Function: fn}}}
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest("PUT", "/b", strings.NewReader("\xff\xfe")))
	if !got.IsBase64Encoded || got.Body != base64.StdEncoding.EncodeToString([]byte("\xff\xfe")) {
		t.Errorf("binary body: base64 %v body %q", got.IsBase64Encoded, got.Body)
	}
}

func TestHTTPAPIUnmatchedAndFailing(t *testing.T) {
	failing := lambdalocal.InProcess(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{}, errors.New("boom")
	})
	api := &lambdalocal.HTTPAPI{Routes: []lambdalocal.Route{{Method: "POST", Path: "/webhooks/{provider}", Function: failing}}}
	tests := []struct {
		name, method, path string
		want               int
	}{
		{"no route", "POST", "/nope", 404},
		{"missing parameter", "POST", "/webhooks/", 404},
		{"other method", "GET", "/webhooks/stripe", 404},
		{"function error", "POST", "/webhooks/stripe", 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader("{}")))
			if rec.Code != tt.want {
				t.Errorf("status = %d, want %d", rec.Code, tt.want)
			}
			if strings.Contains(rec.Body.String(), "boom") {
				t.Errorf("function error text leaked: %s", rec.Body)
			}
		})
	}
}
