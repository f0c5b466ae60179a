package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// screenshotsEnv set to 1 makes TestConsoleInABrowser write the
// screenshots of docs/console.md (docs/console/*.png) again.
const screenshotsEnv = "HOOKINBOX_SCREENSHOTS"

// chromiumPath returns the browser the browser test drives:
// $HOOKINBOX_CHROMIUM, or Debian's chromium on the PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HOOKINBOX_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("Chromium is not installed, and the console's browser test drives it: `make test` installs it (apt-get install -y chromium, as root), " +
		"or install Debian's chromium package, or set HOOKINBOX_CHROMIUM to a Chromium or Chrome binary. go test -short skips this test.")
	return ""
}

// browserTab is a tab of a headless Chromium, offline, with the console
// messages its pages logged and the screenshots it takes.
type browserTab struct {
	t     *testing.T
	ctx   context.Context
	shots string // where screenshots go; "" takes none

	mu     sync.Mutex
	logged []chromedp.ConsoleMessage
}

// openBrowser starts the browser for the test; it stops when the test
// ends, and 90 s at most after it starts.
func openBrowser(t *testing.T) *browserTab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800),
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc(); cancel() })
	b := &browserTab{t: t, ctx: tab}
	if os.Getenv(screenshotsEnv) == "1" {
		b.shots = filepath.Join(repoRoot(t), "docs", "console")
	}
	logged := chromedp.Console(tab)
	go func() {
		for m, err := range logged {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.logged = append(b.logged, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// do runs steps, or fails the test with what the page shows.
func (b *browserTab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		page, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		b.t.Fatalf("%s: %v\nthe page:\n%s", what, err, page)
	}
}

// text returns the text of the first element sel selects.
func (b *browserTab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

// shot writes the screenshot name.png for docs/console.md, when asked to
// (HOOKINBOX_SCREENSHOTS=1).
func (b *browserTab) shot(name string) {
	b.t.Helper()
	if b.shots == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
	}
}

// errors returns the errors the pages logged: a script that failed, or
// one the Content-Security-Policy refused.
func (b *browserTab) errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.logged {
		if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
			out = append(out, m.Text)
		}
	}
	return out
}

// TestConsoleInABrowser is a person at the console: on a local stack
// whose Stripe API refused one checkout's invoice, so that the event was
// parked, they open the events page, find the parked event, replay it
// from its page (dry run, then the confirmation, from the keyboard) and
// see it DONE. On the way it looks at every page, at 1280x800 and the
// events on a phone, and with HOOKINBOX_SCREENSHOTS=1 it writes their
// screenshots for docs/console.md.
func TestConsoleInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: headless Chromium on the local stack; run without -short")
	}
	b := openBrowser(t)
	p, parked := parkedCheckout(t)
	// The state file as hookinbox dev's default: the pages' command lines
	// then name no flag.
	t.Setenv(stateFileEnv, pipelineState(t, p))
	url := startConsole(t)
	processInBackground(t, p)

	b.do("open the console's URL", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#live table")))
	b.shot("events")
	tourPages(b)
	replayFromItsPage(b, parked)
	if it, err := p.Inbox.Get(context.Background(), parked); err != nil || it.Status != inbox.Done {
		t.Errorf("in the inbox: %s, %v; want DONE", it.Status, err)
	}
	b.do("the events on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(url+"events"),
		chromedp.WaitVisible(chromedp.CSS("#live table")))
	if w, err := chromedp.Run(b.ctx, chromedp.Evaluate[int]("document.documentElement.scrollWidth")); err != nil || w > 390 {
		t.Errorf("on a phone the page is %d pixels wide (%v), want it to fit 390", w, err)
	}
	b.shot("events-phone")
	for _, e := range b.errors() {
		t.Errorf("the browser logged an error: %s", e)
	}
	cookieStaysHome(b, url)
}

// cookieStaysHome opens, in the signed-in browser, a listener on another
// port of 127.0.0.1 (another local user's) and the console without its
// token: the listener gets none of the console's cookies, and the
// console refuses.
func cookieStaysHome(b *browserTab, consoleURL string) {
	cookies := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case cookies <- r.Header.Get("Cookie"):
		default:
		}
		_, _ = io.WriteString(w, "another listener")
	}))
	defer other.Close()
	b.do("open another listener of this machine", chromedp.Navigate(other.URL+"/events"), chromedp.WaitVisible(chromedp.CSS("body")))
	if got := <-cookies; strings.Contains(got, "hookinbox_console") {
		b.t.Errorf("another port of 127.0.0.1 got the console's cookie: %q", got)
	}
	u, _ := neturl.Parse(consoleURL)
	b.do("open the console without its token", chromedp.Navigate("http://"+u.Host+"/events"), chromedp.WaitVisible(chromedp.CSS("body")))
	if got := b.text("body"); !strings.Contains(got, "open the URL hookinbox console printed") {
		b.t.Errorf("the console without its token shows:\n%s", got)
	}
}

// tourPages opens each page from the navigation and back to the events.
func tourPages(b *browserTab) {
	for _, pg := range []struct{ path, name, want string }{
		{"parked", "parked", "create invoice"}, {"health", "health", "Received"},
		{"destinations", "destinations", "3 delivered"}, {"personal", "personal", "Past erasures"},
	} {
		b.do("open "+pg.path, chromedp.Click(`//nav//a[@href="`+pg.path+`"]`), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if got := b.text("main"); !strings.Contains(got, pg.want) {
			b.t.Errorf("%s shows no %q:\n%s", pg.path, pg.want, got)
		}
		b.shot(pg.name)
	}
	b.do("back to the events", chromedp.Click(`//nav//a[@href="events"]`), chromedp.WaitVisible(chromedp.CSS("#live table")))
}

// replayFromItsPage finds the parked event on the events page, replays it
// from its page and waits until its page shows it DONE.
func replayFromItsPage(b *browserTab, parked webhook.Key) {
	if got := b.text("#live table"); !strings.Contains(got, parked.String()) {
		b.t.Fatalf("the events page does not list %s:\n%s", parked, got)
	}
	b.do("open the parked event: the row whose status is DEAD", chromedp.Click(`//tr[.//span[contains(@class, "s-dead")]]//a`),
		chromedp.WaitVisible(`//button[contains(., "Replay")]`))
	if got := b.text("h1"); got != parked.String() {
		b.t.Fatalf("opened %q, want %s", got, parked)
	}
	b.shot("event")
	b.do("replay it: the dry run", chromedp.Click(`//button[contains(., "Replay")]`), chromedp.WaitVisible(`//button[contains(., "Confirm: replay")]`))
	if got := b.text("main"); !strings.Contains(got, "would replay") || !strings.Contains(got, "nothing was changed") {
		b.t.Errorf("the dry run's page:\n%s", got)
	}
	b.do("confirm from the keyboard", chromedp.Focus(`//button[contains(., "Confirm: replay")]`), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`//p[@class="result"][contains(., "1 replayed")]`))
	b.shot("replay")
	b.do("back to the event, until it is DONE", chromedp.Click(`//a[. = "Back"]`), chromedp.WaitVisible(`//dd/span[contains(@class, "s-done")]`))
}

// parkedCheckout starts a pipeline with three checkouts, each delivered
// to a destination too: two DONE and, between them, one of the customer
// whose first invoice the Stripe stand-in refuses (as the one `hookinbox
// dev`'s banner sends), parked in the DLQ as the processor parks it.
func parkedCheckout(t *testing.T) (*pipelinetest.Pipeline, webhook.Key) {
	t.Helper()
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "thanks") }))
	t.Cleanup(endpoint.Close)
	p := pipelinetest.NewWith(t, pipelinetest.Options{Forward: endpoint.URL + "/hooks"})
	var parked webhook.Key
	for i := 1; i <= 3; i++ {
		var opts []verifytest.Option
		if i == 2 {
			opts = append(opts, verifytest.WithCustomer(standin.RefusedOnce))
		}
		k, body := pipelinetest.Checkout("console", i, time.Now().Add(-time.Minute), opts...)
		p.Deliver(t, body)
		p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{k}) })
		if i == 2 {
			parked = k
		}
	}
	if !p.AllIn(t, []webhook.Key{parked}, inbox.Dead) || len(p.DLQReasons(t)) != 1 {
		t.Fatalf("the second checkout was not parked: %v", p.DLQReasons(t))
	}
	return p, parked
}

// processInBackground runs the processor on the events queue, as
// Lambda's event source mapping does, until the test ends.
func processInBackground(t *testing.T, p *pipelinetest.Pipeline) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if n, err := p.Source.PollOnce(ctx); err != nil || n == 0 {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}
