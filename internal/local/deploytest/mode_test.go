package deploytest

import (
	"slices"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// TestTemplateAdyenModeIsItsOwn: a stack that enables Adyen cannot be
// deployed without Adyen's own mode (the template's Rules, which
// CloudFormation checks before it changes anything); no other provider's
// mode stands in for it.
func TestTemplateAdyenModeIsItsOwn(t *testing.T) {
	const inv = "Adyen runs in the mode set for it beside its secret, never another provider's"
	tpl := loadProject(t)
	for _, tc := range []struct {
		name   string
		params map[string]string
		refuse []string
	}{
		{"no Adyen", nil, nil},
		{"Adyen without its mode", map[string]string{"AdyenHmacKeyArn": secretARN}, []string{"AdyenModeSet"}},
		{"Adyen without its mode, beside a live Stripe", map[string]string{"AdyenHmacKeyArn": secretARN, "StripeLivemode": "true"}, []string{"AdyenModeSet"}},
		{"Adyen live", map[string]string{"AdyenHmacKeyArn": secretARN, "AdyenLive": "true"}, nil},
		{"Adyen test", map[string]string{"AdyenHmacKeyArn": secretARN, "AdyenLive": "false"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := brokenRules(t, tpl, deployment(t, tpl, samtemplate.Context{Params: tc.params})); !slices.Equal(got, tc.refuse) {
				broken(t, inv, "rules that refuse the deployment: %v, want %v", got, tc.refuse)
			}
		})
	}
}

// brokenRules returns the template's Rules whose condition holds in c
// and one of whose assertions does not, in name order: CloudFormation
// refuses such a deployment.
func brokenRules(t *testing.T, tpl *samtemplate.Template, c samtemplate.Context) []string {
	t.Helper()
	var out []string
	for name, def := range tpl.Rules {
		rule, _ := def.(map[string]any)
		holds := func(what string, v any) bool {
			got, err := tpl.Resolve(v, c)
			if err != nil {
				t.Fatalf("rule %s %s: %v", name, what, err)
			}
			b, ok := got.(bool)
			if !ok {
				t.Fatalf("rule %s %s: %v, want a boolean", name, what, got)
			}
			return b
		}
		if cond, ok := rule["RuleCondition"]; ok && !holds("RuleCondition", cond) {
			continue
		}
		asserts, _ := rule["Assertions"].([]any)
		for _, a := range asserts {
			if m, _ := a.(map[string]any); !holds("Assert", m["Assert"]) {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}
