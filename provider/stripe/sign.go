package stripe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader returns the Stripe-Signature header value Stripe sends
// with body signed at at: "t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>">",
// with one v1 per secret, in order, as Stripe does while a secret is being
// rolled. With no secret it returns "t=<unix>" alone.
func SignatureHeader(body []byte, at time.Time, secrets ...string) string {
	t := strconv.FormatInt(at.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + t)
	for _, secret := range secrets {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(t + "."))
		m.Write(body)
		b.WriteString(",v1=" + hex.EncodeToString(m.Sum(nil)))
	}
	return b.String()
}

// Headers returns the headers Stripe sends body with, signed at at with
// every secret. Names are lower case, as API Gateway gives them.
func Headers(body []byte, at time.Time, secrets ...string) map[string]string {
	return map[string]string{
		"content-type":     "application/json; charset=utf-8",
		"user-agent":       "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
		"stripe-signature": SignatureHeader(body, at, secrets...),
	}
}
