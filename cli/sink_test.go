package cli

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/providers/standard"

	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
)

// startSink runs hookinbox sink with args on a free address until the
// test ends, and returns its URL and output.
func startSink(t *testing.T, args ...string) (string, *pipelinetest.SyncBuffer) {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr pipelinetest.SyncBuffer
	exited := make(chan int, 1)
	go func() { exited <- run(ctx, append([]string{"sink", "--addr", addr}, args...), &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		if code := <-exited; code != 0 {
			t.Errorf("sink exit %d: %s", code, stderr.String())
		}
	})
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	listening := func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		return c.Close() == nil
	}
	if !waitFor(wctx, listening) {
		t.Fatalf("sink not listening on %s: %s", addr, stderr.String())
	}
	return "http://" + addr + "/", &stdout
}

// deliverTo posts body to url as a destination delivery, signed now
// with secret, and returns the status answered.
func deliverTo(t *testing.T, url, id, body, secret string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range standard.Headers([]byte(body), id, time.Now(), secret) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestSinkCommandPrintsEachDelivery(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := `{"id":"msg_a1","provider":"shopify","type":"orders/paid","key":"shopify#e1","received_at":"2026-12-02T03:00:00Z","payload":{"id":1}}`
	url, out := startSink(t, "--secret", secret, "--status", "503", "--fail-first", "1", "--body")
	var got []int
	for _, s := range []string{secret, secret, "whsec_bG9jYWwtaG9va2luYm94LXN0YW5kYXJkLXdlYmhvb2tz"} {
		got = append(got, deliverTo(t, url, "msg_a1", body, s))
	}
	if diff := cmp.Diff([]int{503, 200, 401}, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		"503 webhook-id=msg_a1 provider=shopify type=orders/paid key=shopify#e1 first delivery\n",
		"200 webhook-id=msg_a1 provider=shopify type=orders/paid key=shopify#e1 redelivery (attempt 2)\n",
		"  " + body + "\n",
		"401 refused: standard: none of 1 v1 and 0 v1a signatures matches any of 1 secrets: signature mismatch",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "(fresh;") {
		t.Errorf("a given secret is printed as fresh:\n%s", out.String())
	}
}

func TestSinkCommandMakesASecret(t *testing.T) {
	url, out := startSink(t)
	m := regexp.MustCompile(`secret (whsec_\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no fresh secret printed:\n%s", out.String())
	}
	body := `{"id":"msg_b1","provider":"stripe","type":"invoice.paid","key":"stripe#evt_9","received_at":"2026-12-02T03:00:00Z","payload":{}}`
	if got := deliverTo(t, url, "msg_b1", body, m[1]); got != http.StatusOK {
		t.Errorf("a delivery signed with the printed secret answered %d, want 200", got)
	}
	if want := "dev --forward " + url + " --forward-secret " + m[1]; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}

func TestSinkUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sink", "--status", "99"}, "--status 99 is not an HTTP status"},
		{[]string{"sink", "--secret", "whsk_bG9jYWwtaG9va2luYm94LXN0YW5kYXJkLWVkMjU1MTk="}, "private signing key"},
		{[]string{"sink", "extra"}, "sink takes no arguments"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
