package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestBannerSuggestsWhatTheCLIHas: the banner's lines to try send the
// sample event, then show the example shop with a CLI that has its state
// command, else inspect the event; a state file of its own is passed on.
func TestBannerSuggestsWhatTheCLIHas(t *testing.T) {
	withState, err := newApp(Options{Commands: []Command{{Name: "state", Run: func(context.Context, []string, io.Writer, io.Writer) error { return nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	shop := &devState{WebhookURL: "http://127.0.0.1:3000/webhooks/stripe", WebhookSecret: "whsec_x", Tables: map[string]string{"ShopTable": "hookinbox-shop"}}
	for _, tt := range []struct {
		name      string
		app       *app
		state     *devState
		stateFile string
		want      []string
	}{
		{"shop", withState, shop, defaultStateFile(), []string{" send stripe checkout.session.completed --times 3\n", " state\n", "--url http://127.0.0.1:3000/webhooks/stripe --secret whsec_x"}},
		{"no state command", testApp(), shop, defaultStateFile(), []string{" inspect 'stripe#<event id>'\n"}},
		{"no shop", withState, &devState{}, "/tmp/s.json", []string{" inspect 'stripe#<event id>' --state-file /tmp/s.json\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &devStack{app: tt.app, flags: devFlags{stateFile: tt.stateFile}, sampleType: "checkout.session.completed"}
			var out bytes.Buffer
			d.printTryIt(&out, tt.state)
			for _, want := range tt.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("banner:\n%s\nwant %q in it", &out, want)
				}
			}
		})
	}
}

// TestDevBannerLeadsToTheConsole checks what dev's banner tells a
// newcomer to do after sending a first event: with the example shop,
// send a checkout that is parked, then open the console to replay it;
// without the shop, open the console. The lines name the state file
// when it is not the default.
func TestDevBannerLeadsToTheConsole(t *testing.T) {
	t.Setenv(stateFileEnv, "")
	tests := []struct {
		name      string
		shop      bool
		stateFile string
		want      []string // in this order
		wantNot   string
	}{
		{"the example shop", true, defaultStateFile(), []string{
			"  go run ./cmd/hookinbox send stripe checkout.session.completed --times 3\n",
			"  go run ./cmd/hookinbox send stripe checkout.session.completed --customer cus_refused_once\n",
			"  go run ./cmd/hookinbox console   (open the URL it prints: Events, the DEAD one, Replay)\n",
		}, ""},
		{"another state file", true, "/srv/dev.json", []string{
			"  go run ./cmd/hookinbox send stripe checkout.session.completed --customer cus_refused_once --state-file /srv/dev.json\n",
			"  go run ./cmd/hookinbox console --state-file /srv/dev.json   (open the URL it prints",
		}, ""},
		{"a team's own business", false, defaultStateFile(), []string{
			"  go run ./cmd/hookinbox inspect 'stripe#<event id>'\n",
			"See the events in a browser, and replay the parked ones:\n  go run ./cmd/hookinbox console   (open the URL it prints",
		}, "cus_refused_once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			d := &devStack{app: testApp(), flags: devFlags{stateFile: tt.stateFile}, stdout: &out, sampleType: "checkout.session.completed"}
			s := &devState{StackName: "hookinbox", Tables: map[string]string{"InboxTable": "hookinbox-inbox"}}
			if tt.shop {
				s.Tables["ShopTable"] = "hookinbox-shop"
			}
			d.printBanner(s, nil)
			banner, at := out.String(), 0
			for _, want := range tt.want {
				i := strings.Index(banner[at:], want)
				if i < 0 {
					t.Fatalf("the banner lacks %q after its first %d bytes:\n%s", want, at, banner)
				}
				at += i + len(want)
			}
			if tt.wantNot != "" && strings.Contains(banner, tt.wantNot) {
				t.Errorf("the banner names %q:\n%s", tt.wantNot, banner)
			}
		})
	}
}
