package cli

import (
	"strings"
	"testing"
)

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
			d := &devStack{flags: devFlags{stateFile: tt.stateFile}, stdout: &out, sampleType: "checkout.session.completed"}
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
