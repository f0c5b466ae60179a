package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/verify"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/stripeevent"
	"github.com/hookinbox/hookinbox/webhook"
)

// localSecrets is the secret send signs with for each provider when no
// --secret is given and no stack is running.
var localSecrets = map[string]string{
	verify.GitHubProvider:   pipeline.GitHubSecret,
	verify.ShopifyProvider:  pipeline.ShopifySecret,
	verify.StandardProvider: pipeline.StandardSecret,
	verify.AdyenProvider:    pipeline.AdyenHMACKey,
}

// providerDelivery is one delivery, built once and sent --times times.
type providerDelivery struct {
	method, url string
	header      map[string]string
	body        []byte
	key, typ    string
}

// sendProvider sends a file (or, for GoPay, a payment) as provider would,
// signed as it signs, --times times with the same bytes.
func sendProvider(ctx context.Context, provider, what string, f sendFlags, stdout io.Writer) error {
	spec, ok := verify.Lookup(provider)
	if !ok {
		var names []string
		for _, s := range verify.Specs {
			names = append(names, s.Name)
		}
		return usagef("unknown provider %q: send knows %s", provider, strings.Join(names, ", "))
	}
	if f.id != "" && webhook.ValidateEventID(f.id) != nil {
		return usagef("--id %q: use letters, digits, '_' and '-'", f.id)
	}
	st, err := loadState(f.stateFile)
	if err != nil && !errors.Is(err, errNoStack) {
		return err
	}
	url, secret := f.url, f.secret
	if url == "" {
		base := "http://" + defaultAddr
		if a := os.Getenv(addrEnv); a != "" {
			base = "http://" + a
		}
		if st != nil {
			base = st.BaseURL
		}
		url = base + "/webhooks/" + provider
	}
	if secret == "" && st != nil {
		secret = st.functionEnv("ReceiverFunction", spec.SecretEnv)
	}
	if secret == "" {
		secret = localSecrets[provider]
	}
	d, err := buildDelivery(ctx, provider, what, url, secret, f, st)
	if err != nil {
		return err
	}
	return sendTimes(ctx, stdout, f, url, string(d.key), d.typ, func(ctx context.Context, client *http.Client) (string, bool) {
		return deliverRaw(ctx, client, d)
	})
}

// buildDelivery reads the file and signs it as provider does.
func buildDelivery(ctx context.Context, provider, what, url, secret string, f sendFlags, st *devState) (providerDelivery, error) {
	if provider == verify.GoPayProvider {
		return gopayDelivery(ctx, what, url, f, st)
	}
	body, err := os.ReadFile(what)
	if err != nil {
		return providerDelivery{}, fmt.Errorf("%s wants a payload file (see testdata/%s/): %w", provider, provider, err)
	}
	name := strings.TrimSuffix(filepath.Base(what), ".json")
	typ := f.typ
	d := providerDelivery{method: http.MethodPost, url: url, body: body}
	switch provider {
	case verify.GitHubProvider:
		if typ == "" {
			typ = name
		}
		id := orFresh(f.id, uuid())
		d.header, d.key, d.typ = verifytest.GitHubHeaders(body, secret, id, typ), "github#"+id, typ
	case verify.ShopifyProvider:
		if typ == "" {
			typ = strings.Replace(name, "_", "/", 1)
		}
		id := orFresh(f.id, uuid())
		d.header, d.key, d.typ = verifytest.ShopifyHeaders(body, secret, id, typ, time.Now()), "shopify#"+id, typ
	case verify.StandardProvider:
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(body, &head)
		id := orFresh(f.id, "msg_"+strings.TrimPrefix(stripeevent.NewID(), "evt_"))
		d.header, d.key, d.typ = verifytest.StandardHeaders(body, id, time.Now(), envconfig.Split(secret)...), "standard#"+id, head.Type
	case verify.AdyenProvider:
		signed, err := verifytest.SignAdyenFile(body, envconfig.Split(secret)[0])
		if err != nil {
			return providerDelivery{}, fmt.Errorf("%s: %w", what, err)
		}
		var batch struct {
			Items []struct {
				Item struct{ PspReference, EventCode string } `json:"NotificationRequestItem"`
			} `json:"notificationItems"`
		}
		_ = json.Unmarshal(signed, &batch)
		var keys []string
		for _, it := range batch.Items {
			keys = append(keys, "adyen#"+it.Item.PspReference+"-"+it.Item.EventCode)
		}
		d.body, d.header, d.key, d.typ = signed, map[string]string{"content-type": "application/json"}, strings.Join(keys, " "), "notification"
	default:
		return providerDelivery{}, usagef("send does not know how %s signs", provider)
	}
	return d, nil
}

// gopayDelivery is GoPay's unsigned GET ?id=<payment id>. Given a payment
// file it first sets the payment on the running stack's GoPay stand-in
// (GoPay's own state changes before it notifies).
func gopayDelivery(ctx context.Context, what, url string, f sendFlags, st *devState) (providerDelivery, error) {
	id := what
	if isFile(what) {
		raw, err := os.ReadFile(what)
		if err != nil {
			return providerDelivery{}, err
		}
		var p struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || p.ID == "" {
			return providerDelivery{}, fmt.Errorf("%s is not a GoPay payment with an id", what)
		}
		id = p.ID.String()
		if st == nil || st.Endpoints["GOPAY_API_URL"] == "" {
			return providerDelivery{}, errors.New("setting a payment needs a running hookinbox dev (its GoPay stand-in); send a payment id to notify only")
		}
		api := strings.TrimSuffix(st.Endpoints["GOPAY_API_URL"], "/api")
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, api+"/_standin/payments/"+id, bytes.NewReader(raw))
		if err != nil {
			return providerDelivery{}, err
		}
		resp, err := (&http.Client{Timeout: f.timeout}).Do(req)
		if err != nil {
			return providerDelivery{}, fmt.Errorf("set the payment on the GoPay stand-in: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return providerDelivery{}, fmt.Errorf("set the payment on the GoPay stand-in: %s", resp.Status)
		}
	}
	if err := verify.GoPayID(id); err != nil {
		return providerDelivery{}, usagef("%q is neither a GoPay payment file nor a payment id", what)
	}
	return providerDelivery{method: http.MethodGet, url: url + "?id=" + id, key: "gopay#" + id, typ: verify.GoPayNotification}, nil
}

// deliverRaw sends d and describes the answer; ok is false unless 2xx.
func deliverRaw(ctx context.Context, client *http.Client, d providerDelivery) (string, bool) {
	var body io.Reader
	if d.body != nil {
		body = bytes.NewReader(d.body)
	}
	req, err := http.NewRequestWithContext(ctx, d.method, d.url, body)
	if err != nil {
		return "error: " + err.Error(), false
	}
	for k, v := range d.header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "error: " + err.Error(), false
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var answer struct{ Status, Error, Message string }
	_ = json.Unmarshal(raw, &answer)
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	switch {
	case ok && answer.Status != "":
		return answer.Status, true
	case ok:
		return strings.TrimSpace(string(raw)), true
	}
	msg := strings.TrimSpace(answer.Error + answer.Message)
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
	}
	return strings.TrimSpace(resp.Status + " " + msg), false
}

func orFresh(id, fresh string) string {
	if id != "" {
		return id
	}
	return fresh
}

// uuid returns a random version-4 UUID, as GitHub and Shopify id deliveries.
func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
