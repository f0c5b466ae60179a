package pipeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/destination"
)

func TestLocalDestinations(t *testing.T) {
	const (
		crmSecret = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:crm"
		crmToken  = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:crm-token"
		crm       = `[{"name":"crm","url":"https://crm.example.com/hook","events":["stripe:*"],"secret":"` + crmSecret + `","header":"X-Token","header_secret":"` + crmToken + `"}]`
		bus       = `[{"name":"analytics","bus":"analytics","events":["*"]}]`
		sinkURL   = "http://127.0.0.1:4100/"
	)
	local := strings.Replace(crm, "https://crm.example.com/hook", "http://localhost:4200/hook", 1)
	forward := destination.Config{Name: ForwardName, URL: sinkURL, Events: []string{"*"}, Secret: SecretARN("hookinbox-forward"), Concurrency: 4}
	crmAt := func(url string) destination.Config {
		return destination.Config{Name: "crm", URL: url, Events: []string{"stripe:*"}, Secret: crmSecret, Header: "X-Token", HeaderSecret: crmToken, Concurrency: 4}
	}
	analytics := destination.Config{Name: "analytics", URL: sinkURL, Events: []string{"*"}, Secret: SecretARN("hookinbox-analytics"), Concurrency: 4}
	for _, tc := range []struct {
		name    string
		opts    Options
		value   string
		given   string // DESTINATION_SECRETS already set (hookinbox dev --env)
		want    []destination.Config
		secrets map[string]string // DESTINATION_SECRETS: ARN → local value
		wantErr string
	}{
		{"none", Options{}, "", "", nil, nil, ""},
		{"forward only", Options{Forward: sinkURL}, "", "", []destination.Config{forward},
			map[string]string{forward.Secret: DestinationSecret}, ""},
		{"one on this machine, with local secrets", Options{}, local, "", []destination.Config{crmAt("http://localhost:4200/hook")},
			map[string]string{crmSecret: DestinationSecret, crmToken: destinationHeaderValue}, ""},
		{"one elsewhere goes to forward, another local secret", Options{Forward: sinkURL, DestinationSecret: "whsec_bXk="}, crm, "",
			[]destination.Config{crmAt(sinkURL), forward},
			map[string]string{crmSecret: "whsec_bXk=", crmToken: destinationHeaderValue, forward.Secret: "whsec_bXk="}, ""},
		{"a bus goes to forward", Options{Forward: sinkURL}, bus, "", []destination.Config{analytics, forward},
			map[string]string{analytics.Secret: DestinationSecret, forward.Secret: DestinationSecret}, ""},
		{"a local value given", Options{}, local, `{"` + crmSecret + `":"whsec_Z2l2ZW4="}`, []destination.Config{crmAt("http://localhost:4200/hook")},
			map[string]string{crmSecret: "whsec_Z2l2ZW4=", crmToken: destinationHeaderValue}, ""},
		{"one elsewhere without forward", Options{}, crm, "", nil, nil, "delivers to no bus or URL off this machine"},
		{"forward not on loopback", Options{Forward: "http://example.com/"}, "", "", nil, nil, "plain http:// only to"},
		{"name taken", Options{Forward: sinkURL}, strings.Replace(crm, `"crm"`, `"forward"`, 1), "", nil, nil, `a destination is named "forward"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Stack{opts: tc.opts}
			env := map[string]string{destinationsEnv: tc.value, destinationSecretsEnv: tc.given}
			err := s.setDestinations(env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var cfgs []destination.Config
			var secrets map[string]string
			if tc.want != nil {
				if err := json.Unmarshal([]byte(env[destinationsEnv]), &cfgs); err != nil {
					t.Fatalf("DESTINATIONS %q: %v", env[destinationsEnv], err)
				}
				if err := json.Unmarshal([]byte(env[destinationSecretsEnv]), &secrets); err != nil {
					t.Fatalf("DESTINATION_SECRETS %q: %v", env[destinationSecretsEnv], err)
				}
			}
			if diff := cmp.Diff(tc.want, cfgs); diff != "" {
				t.Errorf("DESTINATIONS (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.secrets, secrets); diff != "" {
				t.Errorf("DESTINATION_SECRETS (-want +got):\n%s", diff)
			}
			if got, want := env[destination.LocalHTTPEnv], map[bool]string{true: "1"}[tc.want != nil]; got != want {
				t.Errorf("%s = %q; want %q: the local stack's destinations are on this machine", destination.LocalHTTPEnv, got, want)
			}
		})
	}
}
