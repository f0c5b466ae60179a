package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/stacktemplate"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// TestStackOfADestinationsFile: the template a team with no Go generates
// from a file with only Destinations runs on the local stack. Its
// functions build, the processor with no business; its destinations, an endpoint
// elsewhere and a bus, deliver to the --forward URL, signed with the local
// secret, beside the forward destination itself.
func TestStackOfADestinationsFile(t *testing.T) {
	emu := devstacktest.ForTest(t)
	raw, err := stacktemplate.Generate([]byte(`Description: destinations only
Destinations:
  - name: crm
    url: https://crm.example.com/hooks
    events: ["stripe:checkout.session.*"]
    secret: arn:aws:secretsmanager:eu-central-1:123456789012:secret:crm-whsec-AbCdEf
  - name: analytics
    bus: analytics
    events: ["*"]
`))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := samtemplate.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	const sinkURL = "http://127.0.0.1:4100/"
	ctx := context.Background()
	st, err := pipeline.Start(ctx, emu, pipeline.Options{Name: devstack.UniqueStackName(), Template: tpl, Forward: sinkURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Every function builds: the processor with no business, the
	// reconciler with no Stripe event types.
	for _, id := range []string{"ReceiverFunction", "ProcessorFunction", "ReconcilerFunction", "DlqReplayFunction"} {
		if _, err := st.Build(ctx, id, nil); err != nil {
			t.Errorf("%s of a destinations-only template: %v", id, err)
		}
	}
	env, err := st.Env("ProcessorFunction", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []destination.Config
	if err := json.Unmarshal([]byte(env["DESTINATIONS"]), &got); err != nil {
		t.Fatal(err)
	}
	want := []destination.Config{
		{Name: "crm", URL: sinkURL, Events: []string{"stripe:checkout.session.*"}, Secret: "arn:aws:secretsmanager:eu-central-1:123456789012:secret:crm-whsec-AbCdEf", Concurrency: 4},
		{Name: "analytics", URL: sinkURL, Events: []string{"*"}, Secret: pipeline.SecretARN("hookinbox-analytics"), Concurrency: 4},
		{Name: "forward", URL: sinkURL, Events: []string{"*"}, Secret: pipeline.SecretARN("hookinbox-forward"), Concurrency: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the local processor's DESTINATIONS (-want +got):\n%s", diff)
	}
	template, err := st.Destinations()
	if err != nil || len(template) != 2 || template[0].URL != "https://crm.example.com/hooks" || template[1].Bus != "analytics" {
		t.Errorf("Destinations = %+v, %v; want the template's, as deployed", template, err)
	}
}
