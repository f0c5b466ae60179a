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
