package github

import (
	"encoding/hex"
	"net/url"

	"github.com/hookinbox/hookinbox/provider"
)

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
