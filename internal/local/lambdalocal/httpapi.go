package lambdalocal

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// Route sends requests matching Method and Path ("/webhooks/{provider}") to
// Function. Method "ANY" matches every method.
type Route struct {
	Method   string
	Path     string
	Function Invoker
}

// HTTPAPI serves routes as API Gateway HTTP API (payload format 2.0) does:
// it turns each request into an APIGatewayV2HTTPRequest, invokes the
// function and writes its APIGatewayV2HTTPResponse. Bodies that are not
// UTF-8 text are passed base64-encoded, as API Gateway does. A path no
// route matches gets 404 {"message":"Not Found"}, a matching path with
// another method too, like API Gateway.
type HTTPAPI struct {
	Routes  []Route
	MaxBody int64 // API Gateway's payload limit, default 10 MiB
	Log     *slog.Logger
}

// ServeHTTP implements http.Handler.
func (a *HTTPAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, params, ok := a.match(r.Method, r.URL.Path)
	if !ok {
		writeJSON(w, http.StatusNotFound, `{"message":"Not Found"}`)
		return
	}
	max := a.MaxBody
	if max <= 0 {
		max = 10 << 20
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil || int64(len(body)) > max {
		writeJSON(w, http.StatusRequestEntityTooLarge, `{"message":"Request Entity Too Large"}`)
		return
	}
	payload, err := json.Marshal(a.event(r, route, params, body))
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, `{"message":"Internal Server Error"}`)
		return
	}
	out, err := route.Function.Invoke(r.Context(), payload)
	if err != nil {
		a.log().Error("http api: function failed", "route", route.Method+" "+route.Path, "reason", err.Error())
		writeJSON(w, http.StatusInternalServerError, `{"message":"Internal Server Error"}`)
		return
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode == 0 {
		a.log().Error("http api: function answer is not an HTTP response", "route", route.Method+" "+route.Path)
		writeJSON(w, http.StatusInternalServerError, `{"message":"Internal Server Error"}`)
		return
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	respBody := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if respBody, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			writeJSON(w, http.StatusInternalServerError, `{"message":"Internal Server Error"}`)
			return
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(respBody)
}

// event builds the payload v2 event for r.
func (a *HTTPAPI) event(r *http.Request, route Route, params map[string]string, body []byte) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	for k, vs := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	headers["host"] = r.Host
	var cookies []string
	if c := r.Header.Get("Cookie"); c != "" {
		cookies = strings.Split(c, "; ")
		delete(headers, "cookie")
	}
	query := map[string]string{}
	for k, vs := range r.URL.Query() {
		query[k] = strings.Join(vs, ",")
	}
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	now := time.Now()
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              route.Method + " " + route.Path,
		RawPath:               r.URL.Path,
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        params,
		Body:                  string(body),
	}
	if !utf8.Valid(body) {
		ev.Body = base64.StdEncoding.EncodeToString(body)
		ev.IsBase64Encoded = true
	}
	ev.RequestContext = events.APIGatewayV2HTTPRequestContext{
		RouteKey:     ev.RouteKey,
		AccountID:    "123456789012",
		Stage:        "$default",
		RequestID:    fmt.Sprintf("local-%d", now.UnixNano()),
		APIID:        "local",
		DomainName:   r.Host,
		Time:         now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
		TimeEpoch:    now.UnixMilli(),
		HTTP:         events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: ip, UserAgent: r.UserAgent()},
		DomainPrefix: "local",
	}
	return ev
}

// match finds the route for method and path. A route whose path matches
// but whose method does not is no match, as in API Gateway.
func (a *HTTPAPI) match(method, path string) (Route, map[string]string, bool) {
	for _, rt := range a.Routes {
		if rt.Method != "ANY" && !strings.EqualFold(rt.Method, method) {
			continue
		}
		if params, ok := matchPath(rt.Path, path); ok {
			return rt, params, true
		}
	}
	return Route{}, nil, false
}

// matchPath matches "/a/{b}/c" and "/a/{rest+}" patterns.
func matchPath(pattern, path string) (map[string]string, bool) {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	params := map[string]string{}
	for i, p := range ps {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "+}") {
			if i >= len(xs) {
				return nil, false
			}
			params[strings.TrimSuffix(p[1:], "+}")] = strings.Join(xs[i:], "/")
			return params, true
		}
		if i >= len(xs) {
			return nil, false
		}
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if xs[i] == "" {
				return nil, false
			}
			params[p[1:len(p)-1]] = xs[i]
			continue
		}
		if p != xs[i] {
			return nil, false
		}
	}
	if len(ps) != len(xs) {
		return nil, false
	}
	return params, true
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func (a *HTTPAPI) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}
