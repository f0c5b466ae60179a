package deploytest

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// TestTemplateUnsignedRouteThrottles: the routes of the unsigned id-only
// providers (GoPay, Mollie) each have a throttle of their own, below the
// other routes', set by two parameters.
func TestTemplateUnsignedRouteThrottles(t *testing.T) {
	tpl := loadProject(t)
	for _, r := range []struct{ event, method, path, params string }{
		{"GoPayNotification", "GET", "/webhooks/gopay", "GoPayThrottle"},
		{"MollieNotification", "POST", "/webhooks/mollie", "MollieThrottle"},
	} {
		inv := fmt.Sprintf("the unsigned %s %s route has a throttle of its own, below the other routes', both parameters", r.method, r.path)
		for _, tt := range []struct {
			name        string
			params      map[string]string
			rate, burst string
		}{
			{"defaults", nil, "10", "20"},
			{"set", map[string]string{r.params + "Rate": "3", r.params + "Burst": "6"}, "3", "6"},
		} {
			t.Run(r.event+"/"+tt.name, func(t *testing.T) {
				c := deployment(t, tpl, samtemplate.Context{Params: tt.params})
				recv, _ := tpl.Function("ReceiverFunction")
				events, err := tpl.Resolve(recv["Events"], c)
				if err != nil {
					t.Fatal(err)
				}
				ev, _ := events.(map[string]any)[r.event].(map[string]any)
				props, _ := ev["Properties"].(map[string]any)
				if props["Path"] != r.path || props["Method"] != r.method {
					t.Fatalf("%s event = %v, want %s %s", r.event, props, r.method, r.path)
				}
				rs, _ := props["RouteSettings"].(map[string]any)
				if fmt.Sprint(rs["ThrottlingRateLimit"]) != tt.rate || fmt.Sprint(rs["ThrottlingBurstLimit"]) != tt.burst {
					broken(t, inv, "%s %s RouteSettings %v, want rate %s burst %s", r.method, r.path, rs, tt.rate, tt.burst)
				}
			})
		}
		own, all := tpl.Parameters[r.params+"Rate"], tpl.Parameters["WebhookThrottleRate"]
		if own.Default == "" || all.Default == "" || atoi(t, own.Default) >= atoi(t, all.Default) {
			broken(t, inv, "%sRate default %q is not below WebhookThrottleRate's %q", r.params, own.Default, all.Default)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
