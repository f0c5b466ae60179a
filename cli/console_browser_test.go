package cli

import (
	"context"
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

// browser starts a headless Chromium for the test, offline, and returns
// its tab and the console messages it logged.
func browser(t *testing.T) (context.Context, func() []chromedp.ConsoleMessage) {
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
	var (
		mu   sync.Mutex
		msgs []chromedp.ConsoleMessage
	)
	logged := chromedp.Console(tab)
	go func() {
		for m, err := range logged {
			if err != nil {
				return
			}
			mu.Lock()
			msgs = append(msgs, m)
			mu.Unlock()
		}
	}()
	return tab, func() []chromedp.ConsoleMessage {
		mu.Lock()
		defer mu.Unlock()
		return append([]chromedp.ConsoleMessage(nil), msgs...)
	}
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
	tab, logged := browser(t)
	p, parked := parkedCheckout(t)
	// The state file as hookinbox dev's default: the pages' command lines
	// then name no flag.
	t.Setenv(stateFileEnv, pipelineState(t, p))
	url := startConsole(t)
	processInBackground(t, p)
	shots := screenshots(t)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			page, _ := chromedp.Run(tab, chromedp.OuterHTML(chromedp.CSS("main")))
			t.Fatalf("%s: %v\nthe page:\n%s", what, err, page)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}

	do("open the console's URL", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#live table")))
	shots.take(tab, "events")
	for _, pg := range []struct{ path, name, want string }{
		{"/parked", "parked", "create invoice"}, {"/health", "health", "Received"},
		{"/destinations", "destinations", "No destination"}, {"/personal", "personal", "Past erasures"},
	} {
		do("open "+pg.path, chromedp.Click(`//nav//a[@href="`+pg.path+`"]`), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if got := text("main"); !strings.Contains(got, pg.want) {
			t.Errorf("%s shows no %q:\n%s", pg.path, pg.want, got)
		}
		shots.take(tab, pg.name)
	}
	do("back to the events", chromedp.Click(`//nav//a[@href="/events"]`), chromedp.WaitVisible(chromedp.CSS("#live table")))

	// The parked event: the row whose status is DEAD.
	row := `//tr[.//span[contains(@class, "s-dead")]]//a`
	if got := text("#live table"); !strings.Contains(got, parked.String()) {
		t.Fatalf("the events page does not list %s:\n%s", parked, got)
	}
	do("open the parked event", chromedp.Click(row), chromedp.WaitVisible(`//button[contains(., "Replay")]`))
	if got := text("h1"); got != parked.String() {
		t.Fatalf("opened %q, want %s", got, parked)
	}
	shots.take(tab, "event")
	do("replay it: the dry run", chromedp.Click(`//button[contains(., "Replay")]`), chromedp.WaitVisible(`//button[contains(., "Confirm: replay")]`))
	if got := text("main"); !strings.Contains(got, "would replay") || !strings.Contains(got, "nothing was changed") {
		t.Errorf("the dry run's page:\n%s", got)
	}
	do("confirm from the keyboard", chromedp.Focus(`//button[contains(., "Confirm: replay")]`), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`//p[@class="result"][contains(., "1 replayed")]`))
	shots.take(tab, "replay")
	do("back to the event, until it is DONE", chromedp.Click(`//a[. = "Back"]`), chromedp.WaitVisible(`//dd/span[contains(@class, "s-done")]`))
	if it, err := p.Inbox.Get(context.Background(), parked); err != nil || it.Status != inbox.Done {
		t.Errorf("in the inbox: %s, %v; want DONE", it.Status, err)
	}

	do("the events on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(strings.Split(url, "?")[0]+"events"), chromedp.WaitVisible(chromedp.CSS("#live table")))
	if w, err := chromedp.Run(tab, chromedp.Evaluate[int]("document.documentElement.scrollWidth")); err != nil || w > 390 {
		t.Errorf("on a phone the page is %d pixels wide (%v), want it to fit 390", w, err)
	}
	shots.take(tab, "events-phone")
	for _, m := range logged() {
		if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
			t.Errorf("the browser logged an error: %s", m.Text)
		}
	}
}

// parkedCheckout starts a pipeline with three checkouts: two DONE and,
// between them, one whose invoice the Stripe API refused (400), parked in
// the DLQ as the processor parks it.
func parkedCheckout(t *testing.T) (*pipelinetest.Pipeline, webhook.Key) {
	t.Helper()
	p := pipelinetest.New(t)
	var parked webhook.Key
	for i := 1; i <= 3; i++ {
		if i == 2 {
			p.Stripe.FailNext(400)
		}
		k, body := pipelinetest.Checkout("console", i, time.Now().Add(-time.Minute))
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

// shooter writes the pages' screenshots into docs/console when
// HOOKINBOX_SCREENSHOTS=1, and does nothing otherwise.
type shooter struct {
	t   *testing.T
	dir string
}

func screenshots(t *testing.T) shooter {
	if os.Getenv(screenshotsEnv) != "1" {
		return shooter{t: t}
	}
	return shooter{t: t, dir: filepath.Join(repoRoot(t), "docs", "console")}
}

func (s shooter) take(tab context.Context, name string) {
	s.t.Helper()
	if s.dir == "" {
		return
	}
	png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(s.dir, name+".png"), png, 0o644)
	}
	if err != nil {
		s.t.Errorf("screenshot %s: %v", name, err)
	}
}
