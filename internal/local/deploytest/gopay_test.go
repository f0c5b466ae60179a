package deploytest

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

func TestTemplateGoPayRouteThrottle(t *testing.T) {
	const inv = "the unsigned GoPay route has a throttle of its own, below the other routes', both parameters"
	tpl := loadProject(t)
	for _, tt := range []struct {
		name        string
		params      map[string]string
		rate, burst string
	}{
		{"defaults", nil, "10", "20"},
		{"set", map[string]string{"GoPayThrottleRate": "3", "GoPayThrottleBurst": "6"}, "3", "6"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := deployment(t, tpl, samtemplate.Context{Params: tt.params})
			recv, _ := tpl.Function("ReceiverFunction")
			events, err := tpl.Resolve(recv["Events"], c)
			if err != nil {
				t.Fatal(err)
			}
			ev, _ := events.(map[string]any)["GoPayNotification"].(map[string]any)
			props, _ := ev["Properties"].(map[string]any)
			if props["Path"] != "/webhooks/gopay" || props["Method"] != "GET" {
				t.Fatalf("GoPayNotification event = %v, want GET /webhooks/gopay", props)
			}
			rs, _ := props["RouteSettings"].(map[string]any)
			if fmt.Sprint(rs["ThrottlingRateLimit"]) != tt.rate || fmt.Sprint(rs["ThrottlingBurstLimit"]) != tt.burst {
				broken(t, inv, "GET /webhooks/gopay RouteSettings %v, want rate %s burst %s", rs, tt.rate, tt.burst)
			}
		})
	}
	gopay, all := tpl.Parameters["GoPayThrottleRate"], tpl.Parameters["WebhookThrottleRate"]
	if gopay.Default == "" || all.Default == "" || atoi(t, gopay.Default) >= atoi(t, all.Default) {
		broken(t, inv, "GoPayThrottleRate default %q is not below WebhookThrottleRate's %q", gopay.Default, all.Default)
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
