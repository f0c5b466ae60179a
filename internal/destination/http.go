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

	"github.com/hookinbox/hookinbox/internal/providers/standard"
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
// maxAnswerHeaders of an answer's headers, waits at most a second for a
// 100 Continue (expectContinueOver), and gives up after timeout.
// Unless local (the local stack's rules), it connects to no address of
// its own machine (ownAddress), whatever name resolved to it.
func newHTTPClient(timeout time.Duration, local bool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxResponseHeaderBytes = maxAnswerHeaders
	t.ExpectContinueTimeout = time.Second // a destination that never says 100 Continue gets the body then
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
	req, a, err := d.request(ctx, ev, b)
	if err != nil {
		return a, err
	}
	resp, err := d.do(req)
	if err != nil {
		a := answer{Text: transportText(ctx, err)}
		return a, failure(d.cfg.Name, a, retried, nil)
	}
	a, c := answerOf(resp, time.Now())
	if c == delivered {
		return a, nil
	}
	return a, failure(d.cfg.Name, a, c, nil)
}

// do sends req and returns its answer, its body read a little and
// closed. A destination that knows no expectation and answers 417
// Expectation Failed to Expect: 100-continue (RFC 9110 10.1.1) is sent
// the request again at once, without asking.
func (d *httpDestination) do(req *http.Request) (*http.Response, error) {
	resp, err := d.client.Do(req)
	if err == nil && resp.StatusCode == http.StatusExpectationFailed && req.Header.Get("Expect") != "" {
		discard(resp)
		again := req.Clone(req.Context())
		again.Header.Del("Expect")
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
		resp, err = d.client.Do(again)
	}
	if err != nil {
		return nil, err
	}
	discard(resp)
	return resp, nil
}

// discard reads a little of an answer's body, so the connection is
// reused, and closes it; the body is never kept or logged.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
}

// expectContinueOver is the body size above which a delivery asks the
// destination to accept it before it is sent (Expect: 100-continue): an
// answer before the body (an early 413, or a 200) is then read as it is,
// not lost to a connection reset and retried.
const expectContinueOver = 16 << 10

// request returns the signed request that delivers b, or the answer and
// error of a delivery that could not be made.
func (d *httpDestination) request(ctx context.Context, ev webhook.Event, b body) (*http.Request, answer, error) {
	h, a, err := d.headers(ctx, ev, b)
	if err != nil {
		return nil, a, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.cfg.URL, b.reader())
	if err != nil {
		a := answer{Text: "bad request: " + err.Error()}
		return nil, a, failure(d.cfg.Name, a, refused, nil)
	}
	req.ContentLength = int64(b.size())
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(b.reader()), nil }
	req.Header.Set("User-Agent", userAgent)
	if b.size() > expectContinueOver {
		req.Header.Set("Expect", "100-continue")
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	return req, answer{}, nil
}

// headers returns a delivery's signed headers, and the static header of
// a destination that has one, or the answer and error of a secret that
// could not be read or used.
func (d *httpDestination) headers(ctx context.Context, ev webhook.Event, b body) (map[string]string, answer, error) {
	signing, err := d.secrets(ctx, d.cfg.Secret)
	if err != nil {
		// Secrets Manager is unavailable or the secret is stale: retried.
		a := answer{Text: "signing secret unavailable"}
		return nil, a, failure(d.cfg.Name, a, retried, err)
	}
	h, err := standard.SignedHeaders(WebhookID(ev.Key(), d.cfg.Name), time.Now(), signing, b.parts()...)
	if err != nil {
		a := answer{Text: "signing secret unusable: " + err.Error()}
		return nil, a, failure(d.cfg.Name, a, refused, nil)
	}
	if d.cfg.Header == "" {
		return h, answer{}, nil
	}
	vals, err := d.secrets(ctx, d.cfg.HeaderSecret)
	if err == nil && len(vals) == 0 {
		err = errors.New("no value")
	}
	if err != nil {
		a := answer{Text: "header secret unavailable"}
		return nil, a, failure(d.cfg.Name, a, retried, err)
	}
	h[d.cfg.Header] = vals[0]
	return h, answer{}, nil
}

// answerOf returns what a destination's answer resp, received at now,
// means (classify): its status and text, and the pause a 429 or 5xx asks
// for.
func answerOf(resp *http.Response, now time.Time) (answer, class) {
	a := answer{Status: resp.StatusCode, Text: resp.Status}
	if a.Text == "" {
		a.Text = fmt.Sprint(resp.StatusCode)
	}
	c := classify(resp.StatusCode)
	if c == retried {
		a.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now)
	}
	if c == refused && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		a.Text += " (redirects are not followed)"
	}
	return a, c
}

// connText is a transport error's text without the request's URL.
func connText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
