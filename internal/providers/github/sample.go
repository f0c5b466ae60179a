package github

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send GitHub's test deliveries: a hook signed in
// X-Hub-Signature-256, as JSON or (variant "form") form-encoded.
func Sender() sample.Sender {
	return sample.Sender{Provider: Provider{}, Sign: sign, Sample: sampleEvent, Help: sendHelp, Examples: sendExamples,
		Variants: []sample.Flag{{Name: "form", Usage: "github: send as a form-encoded hook (payload=<URL-encoded JSON>)"}}}
}

// sign is GitHub's Sign: ev.Body under the first secret, the
// event ev.Type or the file's name (issues.json: issues), a fresh
// delivery id unless ev.ID; variant "form" sends it form-encoded.
func sign(ev sample.Event, secrets []string, _ time.Time) (webhook.Request, error) {
	secret, err := sample.FirstSecret(Name, secrets)
	if err != nil {
		return webhook.Request{}, err
	}
	typ := eventName(ev)
	if typ == "" {
		return webhook.Request{}, fmt.Errorf("github: no event name")
	}
	id := ev.ID
	if id == "" {
		id = sample.UUID()
	}
	req := webhook.Request{Method: "POST", Header: Headers(ev.Body, secret, id, typ), Body: ev.Body}
	if ev.Variant == "form" {
		req.Body, req.Header = Form(ev.Body, secret, id, typ)
	}
	return req, nil
}

// sampleEvent is GitHub's Sample: the delivery id ev.ID or a fresh
// one, the event name ev.Type or the file's name (issues.json: issues).
func sampleEvent(ev sample.Event) (sample.Event, error) {
	if ev.Type = eventName(ev); ev.Type == "" {
		return ev, fmt.Errorf("github: no event name")
	}
	if ev.ID == "" {
		ev.ID = sample.UUID()
	}
	return ev, nil
}

// eventName is ev's event name: ev.Type, or the file's name.
func eventName(ev sample.Event) string {
	if ev.Type != "" {
		return ev.Type
	}
	return strings.TrimSuffix(ev.File, ".json")
}

// Headers returns the headers GitHub sends with body: the delivery id,
// the event name and X-Hub-Signature-256 ("sha256=<hex HMAC>") under
// secret. Names are lower case, as API Gateway gives them.
func Headers(body []byte, secret, delivery, event string) map[string]string {
	return map[string]string{
		"content-type":        "application/json",
		"user-agent":          "GitHub-Hookshot/hookinbox",
		"x-github-delivery":   delivery,
		"x-github-event":      event,
		"x-hub-signature-256": "sha256=" + hex.EncodeToString(provider.HMACSHA256([]byte(secret), body)),
	}
}

// Form returns the body and headers GitHub sends for event when the
// hook's content type is application/x-www-form-urlencoded (the default of
// a hook created through GitHub's API): "payload=" and the URL-encoded
// JSON, signed as it is sent, over the form bytes.
func Form(event []byte, secret, delivery, name string) ([]byte, map[string]string) {
	body := []byte(url.Values{"payload": {string(event)}}.Encode())
	headers := Headers(body, secret, delivery, name)
	headers["content-type"] = "application/x-www-form-urlencoded"
	return body, headers
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `X-Hub-Signature-256 (sha256= hex HMAC of the body); the event is
--type or the file's name (testdata/github/issues.json: issues);
a fresh X-GitHub-Delivery unless --id; --form sends it as a hook
whose content type is application/x-www-form-urlencoded does
(payload=<URL-encoded JSON>, signed over the form)`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send github testdata/github/issues.json --form",
}
