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
	)
	forward := destination.Config{Name: ForwardName, URL: "http://127.0.0.1:4100/", Events: []string{"*"}, Secret: SecretARN("hookinbox-forward"), Concurrency: 4}
	crmConfig := destination.Config{Name: "crm", URL: "https://crm.example.com/hook", Events: []string{"stripe:*"}, Secret: crmSecret, Header: "X-Token", HeaderSecret: crmToken, Concurrency: 4}
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
		{"forward only", Options{Forward: "http://127.0.0.1:4100/"}, "", "", []destination.Config{forward},
			map[string]string{forward.Secret: DestinationSecret}, ""},
		{"the template's, with local secrets", Options{}, crm, "", []destination.Config{crmConfig},
			map[string]string{crmSecret: DestinationSecret, crmToken: DestinationHeaderValue}, ""},
		{"both, another local secret", Options{Forward: "http://127.0.0.1:4100/", DestinationSecret: "whsec_bXk="}, crm, "", []destination.Config{crmConfig, forward},
			map[string]string{crmSecret: "whsec_bXk=", crmToken: DestinationHeaderValue, forward.Secret: "whsec_bXk="}, ""},
		{"a local value given", Options{}, crm, `{"` + crmSecret + `":"whsec_Z2l2ZW4="}`, []destination.Config{crmConfig},
			map[string]string{crmSecret: "whsec_Z2l2ZW4=", crmToken: DestinationHeaderValue}, ""},
		{"forward not on loopback", Options{Forward: "http://example.com/"}, "", "", nil, nil, "plain http:// only to"},
		{"name taken", Options{Forward: "http://127.0.0.1:4100/"}, strings.Replace(crm, `"crm"`, `"forward"`, 1), "", nil, nil, `a destination is named "forward"`},
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
		})
	}
}
