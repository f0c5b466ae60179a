package verify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
)

// realStripeBodies returns the real Stripe payloads (verifytest.StripePayloads).
func realStripeBodies(t testing.TB) [][]byte {
	t.Helper()
	_, bodies, err := verifytest.StripePayloads()
	if err != nil {
		t.Fatal(err)
	}
	return bodies
}

func TestScanStripeHeadTakesRealEvents(t *testing.T) {
	for _, body := range realStripeBodies(t) {
		got, ok := scanStripeHead(body)
		var want stripeEventHead
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		if !ok || got != want {
			t.Errorf("scanStripeHead = %+v, %v; want %+v, true (json.Unmarshal's)", got, ok, want)
		}
	}
}

func TestScanStripeHead(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"plain", `{"id":"evt_1","object":"event","type":"a.b","created":1700000000,"livemode":false,"data":{"object":{"x":[1,2.5e3,-0,true,null,"\u00e9\n"]}}}`, true},
		{"spaces", " \t\r\n{ \"id\" : \"evt_1\" , \"type\" : \"a\" } \n", true},
		{"empty object", `{}`, true},
		{"unicode in a value", `{"id":"evt_1","type":"é","data":"ü"}`, true},
		{"no fields", `{"a":1}`, true},
		{"escape in a field", `{"id":"evt\u005f1"}`, false},
		{"escaped key", `{"\u0069d":"evt_1"}`, false},
		{"key in another case", `{"ID":"evt_1"}`, false},
		{"non-ASCII key", `{"ıd":"evt_1"}`, false},
		{"repeated field", `{"id":"evt_1","id":"evt_2"}`, false},
		{"null field", `{"id":null}`, false},
		{"number id", `{"id":1}`, false},
		{"fractional created", `{"created":1.5}`, false},
		{"exponent created", `{"created":1e3}`, false},
		{"created beyond int64", `{"created":99999999999999999999}`, false},
		{"string livemode", `{"livemode":"true"}`, false},
		{"invalid UTF-8 in a field", "{\"type\":\"a\xffb\"}", false},
		{"control character", "{\"data\":\"a\x01\"}", false},
		{"bad escape", `{"data":"\x"}`, false},
		{"short unicode escape", `{"data":"\u12"}`, false},
		{"trailing comma", `{"id":"evt_1",}`, false},
		{"trailing data", `{"id":"evt_1"} x`, false},
		{"two objects", `{}{}`, false},
		{"unclosed", `{"data":[1,2`, false},
		{"leading zero", `{"data":01}`, false},
		{"bare minus", `{"data":-}`, false},
		{"empty exponent", `{"data":1e}`, false},
		{"bad literal", `{"data":tru}`, false},
		{"array", `[]`, false},
		{"too deep", `{"data":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := scanStripeHead([]byte(tc.body))
			if ok != tc.ok {
				t.Fatalf("scanStripeHead ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			var want stripeEventHead
			if err := json.Unmarshal([]byte(tc.body), &want); err != nil {
				t.Fatalf("scanStripeHead took a body json.Unmarshal refuses: %v", err)
			}
			if got != want {
				t.Errorf("scanStripeHead = %+v, json.Unmarshal %+v", got, want)
			}
		})
	}
}

// FuzzStripeHeadMatchesUnmarshal holds the fast path to encoding/json:
// whatever body it takes, json.Unmarshal takes too, with the same fields.
func FuzzStripeHeadMatchesUnmarshal(f *testing.F) {
	for _, b := range realStripeBodies(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"id":"evt_1","ID":"x","created":-5,"livemode":true,"data":[{},[],"\"",0.1e-2]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := scanStripeHead(body)
		if !ok {
			return
		}
		var want stripeEventHead
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("scanStripeHead took %q, which json.Unmarshal refuses: %v", body, err)
		}
		if got != want {
			t.Fatalf("scanStripeHead(%q) = %+v, json.Unmarshal %+v", body, got, want)
		}
	})
}

func BenchmarkParseStripeEvent(b *testing.B) {
	body := realStripeBodies(b)[0]
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseStripeEvent(body); err != nil {
			b.Fatal(err)
		}
	}
}
