package destination

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/hookinbox/hookinbox/provider/standard"
	"github.com/hookinbox/hookinbox/webhook"
)

// defaultTimeout is how long one HTTP delivery may take, answer included,
// unless the processor's deadline for the event's effects comes first.
const defaultTimeout = 10 * time.Second

// userAgent is every HTTP delivery's User-Agent.
const userAgent = "hookinbox-destination/1"

// maxAnswerHeaders bounds the headers of a destination's answer: one
// that sends more got no answer, and its delivery is retried.
const maxAnswerHeaders = 64 << 10

// newHTTPClient returns the client HTTP destinations are delivered with:
// it follows no redirect (a 3xx is the answer), reads at most
// maxAnswerHeaders of an answer's headers, and gives up after timeout.
// Unless local (the local stack's rules), it connects to no address of
// its own machine (ownAddress), whatever name resolved to it.
func newHTTPClient(timeout time.Duration, local bool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxResponseHeaderBytes = maxAnswerHeaders
	if !local {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: notOwnAddress}
		t.DialContext = d.DialContext
	}
	return &http.Client{
		Timeout:       timeout,
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// notOwnAddress refuses a connection to an address of the machine itself
// (ownAddress): a destination's name that resolves to one.
func notOwnAddress(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if ip := net.ParseIP(host); err == nil && ip != nil && ownAddress(ip) {
		return fmt.Errorf("%s is this machine: deployed, a destination is never delivered to it", host)
	}
	return nil
}

// secretFunc returns the current values of the secret arn (several while
// rotating).
type secretFunc func(ctx context.Context, arn string) ([]string, error)

// httpDestination POSTs events to one URL.
type httpDestination struct {
	cfg     Config
	client  *http.Client
	secrets secretFunc
}

// send delivers b once and classifies the answer. The request streams b's
// parts, and the signature is computed over them in turn, so the payload
// is never copied.
func (d *httpDestination) send(ctx context.Context, ev webhook.Event, b body) (answer, error) {
	signing, err := d.secrets(ctx, d.cfg.Secret)
	if err != nil {
		// Secrets Manager is unavailable or the secret is stale: retried.
		a := answer{Text: "signing secret unavailable"}
		return a, failure(d.cfg.Name, a, retried, err)
	}
	at := time.Now()
	h, err := standard.SignedHeaders(WebhookID(ev.Key(), d.cfg.Name), at, signing, b.parts()...)
	if err != nil {
		a := answer{Text: "signing secret unusable: " + err.Error()}
		return a, failure(d.cfg.Name, a, refused, nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.cfg.URL, b.reader())
	if err != nil {
		a := answer{Text: "bad request: " + err.Error()}
		return a, failure(d.cfg.Name, a, refused, nil)
	}
	req.ContentLength = int64(b.size())
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(b.reader()), nil }
	for k, v := range h {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", userAgent)
	if d.cfg.Header != "" {
		vals, err := d.secrets(ctx, d.cfg.HeaderSecret)
		if err == nil && len(vals) == 0 {
			err = errors.New("no value")
		}
		if err != nil {
			a := answer{Text: "header secret unavailable"}
			return a, failure(d.cfg.Name, a, retried, err)
		}
		req.Header.Set(d.cfg.Header, vals[0])
	}
	resp, err := d.client.Do(req)
	if err != nil {
		a := answer{Text: transportText(ctx, err)}
		return a, failure(d.cfg.Name, a, retried, nil)
	}
	// Read a little of the answer so the connection is reused; it is
	// never kept or logged.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
	a := answer{Status: resp.StatusCode, Text: resp.Status}
	if a.Text == "" {
		a.Text = fmt.Sprint(resp.StatusCode)
	}
	c := classify(resp.StatusCode)
	if c == delivered {
		return a, nil
	}
	if c == retried {
		a.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	if c == refused && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		a.Text += " (redirects are not followed)"
	}
	return a, failure(d.cfg.Name, a, c, nil)
}

// connText is a transport error's text without the request's URL.
func connText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
