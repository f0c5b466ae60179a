package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
)

func TestCheckForward(t *testing.T) {
	for _, tc := range []struct {
		forward, secret string
		want            string // in the error; "" for none
	}{
		{"", pipeline.DestinationSecret, ""},
		{"http://127.0.0.1:4100/", pipeline.DestinationSecret, ""},
		{"http://localhost:4100/hooks", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw,whsec_bXk=", ""},
		{"https://hooks.example.com/", pipeline.DestinationSecret, ""},
		{"http://hooks.example.com/", pipeline.DestinationSecret, "--forward: "},
		{"ftp://127.0.0.1/", pipeline.DestinationSecret, "--forward: "},
		{"http://127.0.0.1:4100/", "", "--forward-secret"},
		{"http://127.0.0.1:4100/", "whsec_not base64!", "--forward-secret"},
		{"http://127.0.0.1:4100/", pipeline.StandardPublicKey, "--forward-secret"},
	} {
		err := checkForward(tc.forward, tc.secret)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("checkForward(%q, %q) = %v, want %q", tc.forward, tc.secret, err, tc.want)
		}
	}
}

func TestPrintDestinations(t *testing.T) {
	var out bytes.Buffer
	printDestinations(&out, []destination.Config{
		{Name: "crm", URL: "https://crm.example.com/hook", Events: []string{"stripe:*", "shopify:orders/*"}},
		{Name: "analytics", Bus: "analytics", Events: []string{"*"}},
		{Name: "mine", URL: "http://localhost:4200/in", Events: []string{"github:*"}},
	}, "http://127.0.0.1:4100/", "whsec_bXk=")
	for _, want := range []string{
		"signed with whsec_bXk= (local only)",
		"crm          http://127.0.0.1:4100/ (in place of https://crm.example.com/hook)   stripe:*, shopify:orders/*\n",
		"analytics    http://127.0.0.1:4100/ (in place of the EventBridge bus analytics)   *\n",
		"mine         http://localhost:4200/in   github:*\n",
		"forward      http://127.0.0.1:4100/   *\n",
		" sink --addr 127.0.0.1:4100 --secret whsec_bXk=\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	printDestinations(&out, nil, "", "whsec_bXk=")
	if out.Len() != 0 {
		t.Errorf("no destinations printed %q", out.String())
	}
}
