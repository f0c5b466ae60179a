package paddle

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send Paddle's test deliveries: an event signed in
// Paddle-Signature with every secret key.
func Sender() sample.Sender {
	return sample.Sender{Provider: Provider{}, Sign: sign, Sample: sampleEvent, Help: sendHelp, Examples: sendExamples}
}

// sign is Paddle's Sign: ev.Body as Paddle sends it, signed at at with every secret
// (one h1 each, as while a key rotates).
func sign(ev sample.Event, secrets []string, at time.Time) (webhook.Request, error) {
	if len(secrets) == 0 {
		return webhook.Request{}, errors.New("paddle: no secret key to sign with")
	}
	return webhook.Request{
		Method: http.MethodPost,
		Header: map[string]string{"content-type": "application/json", signatureHeader: SignatureHeader(ev.Body, at, secrets...)},
		Body:   ev.Body,
	}, nil
}

// sampleEvent is Paddle's Sample: the event keyed by its event_id
// with its event_type; when ev.Fresh, with a fresh event_id and data.id
// (the same prefix, new lower-case letters).
func sampleEvent(ev sample.Event) (sample.Event, error) {
	var head struct {
		EventID   string `json:"event_id"`
		EventType string `json:"event_type"`
		Data      struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(ev.Body, &head); err != nil || head.EventID == "" {
		return ev, errors.New("paddle: not an event with an event_id")
	}
	if ev.Fresh {
		for _, old := range []*string{&head.EventID, &head.Data.ID} {
			if *old == "" {
				continue
			}
			fresh := strings.ToLower(sample.FreshID(*old))
			ev.Body = sample.ReplaceString(ev.Body, *old, fresh)
			*old = fresh
		}
	}
	ev.ID, ev.Type = head.EventID, head.EventType
	return ev, nil
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `Paddle-Signature (ts=<unix>;h1=<hex HMAC of ts:body>, one h1 per
secret key)`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send paddle testdata/paddle/transaction.completed.json",
}

// SignatureHeader returns the Paddle-Signature value Paddle sends with body at at:
// "ts=<unix>;h1=<hex>", one h1 per secret, in order, as during a rotation.
func SignatureHeader(body []byte, at time.Time, secrets ...string) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	var b strings.Builder
	b.WriteString("ts=" + ts)
	for _, s := range secrets {
		b.WriteString(";h1=" + hex.EncodeToString(mac(s, ts, body)))
	}
	return b.String()
}
