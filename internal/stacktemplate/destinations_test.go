package stacktemplate

import (
	"strings"
	"testing"
)

func TestGenerateRefusesBadDestinations(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:s-AbCdEf"
	tests := []struct {
		name, file, want string
	}{
		{"plain http", "Destinations:\n  - {name: crm, url: 'http://crm.example.com', events: ['*'], secret: " + arn + "}\n",
			`Destinations: destination "crm": url: want https://`},
		{"plain http to loopback: the Lambda runtime's API", "Destinations:\n  - {name: crm, url: 'http://127.0.0.1:9001/2018-06-01/runtime/invocation/next', events: ['*'], secret: " + arn + "}\n",
			`Destinations: destination "crm": url: want https://: plain http:// is for the local stack only`},
		{"plain http to localhost", "Destinations:\n  - {name: sink, url: 'http://localhost:4100/', events: ['*'], secret: " + arn + "}\n",
			`destination "sink": url: want https://: plain http:// is for the local stack only`},
		{"the local stack's variable", "Processor:\n  Environment:\n    DESTINATIONS_LOCAL_HTTP: '1'\nDestinations:\n  - {name: crm, bus: b, events: ['*']}\n",
			"Processor.Environment: DESTINATIONS_LOCAL_HTTP is the local stack's alone"},
		{"unknown field", "Destinations:\n  - {name: crm, bus: b, events: ['*'], secrets: x}\n", "field secrets not found"},
		{"empty", "Destinations: []\n", "in Destinations: the list is empty"},
		{"same resource name", "Destinations:\n  - {name: a-b, bus: b, events: ['*']}\n  - {name: ab, bus: b, events: ['*']}\n  - {name: a--b, bus: b, events: ['*']}\n",
			`"a-b" and "a--b" make the same resource name DestinationAB`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Generate = %v; want an error saying %q", err, tt.want)
			}
		})
	}
	var many strings.Builder
	many.WriteString("Destinations:\n")
	for i := range 30 {
		many.WriteString("  - {name: destination-" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ", bus: orders, events: ['stripe:checkout.session.completed', 'shopify:orders/paid']}\n")
	}
	if _, err := Generate([]byte(many.String())); err == nil || !strings.Contains(err.Error(), "Lambda allows 4 KB") {
		t.Errorf("Generate with 30 destinations = %v; want the environment's limit named", err)
	}
}
