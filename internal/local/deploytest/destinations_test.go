package deploytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/stacktemplate"
)

// destinationsOnly is the whole business file of a team with no Go: its
// destinations.
const destinationsOnly = `Description: webhooks-to-n8n
Destinations:
  - name: n8n
    url: https://n8n.example.com/webhook/stripe
    events: ["stripe:checkout.session.*", "shopify:orders/*"]
    secret: arn:aws:secretsmanager:us-east-1:123456789012:secret:n8n-whsec-AbCdEf
    header: X-N8n-Token
    header_secret: arn:aws:secretsmanager:us-east-1:123456789012:secret:n8n-token-AbCdEf
  - name: orders-bus
    bus: orders
    events: ["*"]
`

// generated writes the template `hookinbox template` makes of business
// and returns its path, after cfn-lint (informational checks included)
// finds nothing in it.
func generated(t *testing.T, business string) string {
	t.Helper()
	out, err := stacktemplate.Generate([]byte(business))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if lint, err := exec.Command("cfn-lint", "--include-checks", "I", "--", path).CombinedOutput(); err != nil {
		t.Fatalf("cfn-lint of the generated template: %v\n%s", err, lint)
	}
	return path
}

// TestGeneratedTemplateWithDestinationsOnly: a team with no Go writes only
// Destinations; the generated template lints, translates, and deploys a
// processor that gets exactly its destinations, grants on exactly their
// secrets and bus beyond what hookinbox's own stack grants, least
// privilege kept, and two alarms per HTTP destination (one per bus), on
// the alarm topic and in the dashboard's alarm widget.
func TestGeneratedTemplateWithDestinationsOnly(t *testing.T) {
	const inv = "a business file with only Destinations generates a deployable stack that delivers to them, with grants and alarms per destination"
	path := generated(t, destinationsOnly)
	with := translated(t, path)
	without := translated(t, projectTemplate)
	baseDeployments := translatedDeployments(t, without)
	for name, c := range translatedDeployments(t, with) {
		t.Run(name, func(t *testing.T) {
			for _, p := range privilegeProblems(with, c) {
				broken(t, inv, "%s", p)
			}
			processorGrants := func(tpl *samtemplate.Template, c samtemplate.Context) []string {
				docs, _, err := rolePermissions(tpl, c, "ProcessorRole")
				if err != nil {
					t.Fatal(err)
				}
				g, err := grants(docs)
				if err != nil {
					t.Fatal(err)
				}
				return g
			}
			base := processorGrants(without, baseDeployments[name])
			var added []string
			for _, g := range processorGrants(with, c) {
				if !slices.Contains(base, g) {
					added = append(added, g)
				}
			}
			d := c.WithDefaults()
			want := []string{
				"events:PutEvents on arn:" + d.Partition + ":events:" + d.Region + ":" + d.AccountID + ":event-bus/orders",
				"secretsmanager:GetSecretValue on arn:aws:secretsmanager:us-east-1:123456789012:secret:n8n-token-AbCdEf",
				"secretsmanager:GetSecretValue on arn:aws:secretsmanager:us-east-1:123456789012:secret:n8n-whsec-AbCdEf",
			}
			sort.Strings(added)
			if diff := cmp.Diff(want, added); diff != "" {
				broken(t, inv, "ProcessorRole's grants beyond the stack without destinations (-want +got):\n%s", diff)
			}
		})
	}
	raw, err := samtemplate.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range deployments(t, raw) {
		t.Run(name, func(t *testing.T) {

			fn, err := raw.Function("ProcessorFunction")
			if err != nil {
				t.Fatal(err)
			}
			v, err := raw.Resolve(fn["Environment"], c)
			if err != nil {
				t.Fatal(err)
			}
			vars, _ := v.(map[string]any)["Variables"].(map[string]any)
			cfgs, err := destination.Parse(vars["DESTINATIONS"].(string), false)
			if err != nil || len(cfgs) != 2 || cfgs[0].Name != "n8n" || cfgs[1].Bus != "orders" {
				broken(t, inv, "DESTINATIONS %q reads as %+v, %v", vars["DESTINATIONS"], cfgs, err)
			}
			if _, ok := vars[destination.LocalHTTPEnv]; ok {
				broken(t, inv, "the processor sets %s: deployed, a destination could reach the Lambda runtime's API over plain http", destination.LocalHTTPEnv)
			}
			if _, ok := vars["SHOP_TABLE"]; ok {
				broken(t, inv, "the processor still has SHOP_TABLE: the default main would run the example shop")
			}

			topic, _ := c.Lookup("AlarmTopic", "")
			ns := "hookinbox/" + c.StackName
			alarms := resolvedAlarms(t, raw, c)
			body, err := raw.ResolveString(raw.Resources["Dashboard"].Properties["DashboardBody"], c)
			if err != nil {
				t.Fatal(err)
			}
			_, _, alarmWidget := dashboardMetrics(t, body)
			for id, m := range map[string]watched{
				"DestinationN8nParkedAlarm":       {ns, metrics.DestinationParked, map[string]string{metrics.DimDestination: "n8n"}},
				"DestinationN8nGoneAlarm":         {ns, metrics.DestinationGone, map[string]string{metrics.DimDestination: "n8n"}},
				"DestinationOrdersBusParkedAlarm": {ns, metrics.DestinationParked, map[string]string{metrics.DimDestination: "orders-bus"}},
			} {
				p, ok := alarms[id]
				if !ok {
					broken(t, inv, "no alarm %s", id)
					continue
				}
				if got := alarmMetrics(p); !cmp.Equal(got, []watched{m}) {
					broken(t, inv, "%s watches %v, want %v", id, got, m)
				}
				if !cmp.Equal(p["AlarmActions"], any([]any{topic})) {
					broken(t, inv, "%s notifies %v, want the alarm topic", id, p["AlarmActions"])
				}
				if arn, _ := c.Lookup(id, "Arn"); !alarmWidget[arn] {
					broken(t, inv, "%s is not in the dashboard's alarm widget", id)
				}
			}
			if _, ok := alarms["DestinationOrdersBusGoneAlarm"]; ok {
				broken(t, inv, "a bus destination has a gone alarm; a bus answers no 410")
			}
		})
	}
}
