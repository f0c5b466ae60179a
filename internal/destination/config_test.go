package destination

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	testSecretARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:crm-whsec-AbCdEf"
	testHeaderARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:crm-token-AbCdEf"
)

func TestParse(t *testing.T) {
	got, err := Parse(`[{"name":"crm","url":"https://crm.example.com/hooks","events":["stripe:checkout.session.*"],"secret":"`+testSecretARN+`","header":"X-Token","header_secret":"`+testHeaderARN+`"},
		{"name":"bus","bus":"orders","events":["*"],"concurrency":2}]`, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []Config{
		{Name: "crm", URL: "https://crm.example.com/hooks", Events: []string{"stripe:checkout.session.*"}, Secret: testSecretARN,
			Header: "X-Token", HeaderSecret: testHeaderARN, Concurrency: DefaultConcurrency},
		{Name: "bus", Bus: "orders", Events: []string{"*"}, Concurrency: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if got, err := Parse("  ", false); err != nil || got != nil {
		t.Errorf("Parse(blank) = %v, %v; want nil, nil", got, err)
	}
}

func TestParseErrorsNameDestinationAndField(t *testing.T) {
	ok := Config{Name: "crm", URL: "https://crm.example.com", Events: []string{"*"}, Secret: testSecretARN}
	with := func(f func(c *Config)) []Config { c := ok; f(&c); return []Config{c} }
	tests := []struct {
		name string
		cfgs []Config
		want []string // each must appear in the error
	}{
		{"bad name", with(func(c *Config) { c.Name = "CRM_1" }), []string{`destination "CRM_1": name:`}},
		{"no name", with(func(c *Config) { c.Name = "" }), []string{"destination 1: name:"}},
		{"plain http", with(func(c *Config) { c.URL = "http://crm.example.com" }), []string{`destination "crm": url: want https://: plain http:// is for the local stack only`}},
		{"plain http to loopback", with(func(c *Config) { c.URL = "http://127.0.0.1:9001/2018-06-01/runtime/invocation/next" }), []string{`"crm": url: want https://: plain http:// is for the local stack only`}},
		{"plain http to localhost", with(func(c *Config) { c.URL = "http://localhost:4100/" }), []string{`"crm": url: want https://`}},
		{"ftp", with(func(c *Config) { c.URL = "ftp://crm.example.com" }), []string{`"crm": url:`}},
		{"user info", with(func(c *Config) { c.URL = "https://u:p@crm.example.com" }), []string{`"crm": url: want no user`}},
		{"no secret", with(func(c *Config) { c.Secret = "" }), []string{`"crm": secret:`}},
		{"secret not an ARN", with(func(c *Config) { c.Secret = "whsec_abc" }), []string{`"crm": secret: want a Secrets Manager secret ARN`}},
		{"url and bus", with(func(c *Config) { c.Bus = "orders" }), []string{`"crm": url and bus`}},
		{"neither", with(func(c *Config) { c.URL = "" }), []string{`"crm": url or bus`}},
		{"header alone", with(func(c *Config) { c.Header = "X-Token" }), []string{`"crm": header and header_secret`}},
		{"reserved header", with(func(c *Config) { c.Header, c.HeaderSecret = "Webhook-Signature", testHeaderARN }), []string{`"crm": header: Webhook-Signature is set`}},
		{"no events", with(func(c *Config) { c.Events = nil }), []string{`"crm": events: want at least one`}},
		{"bad pattern", with(func(c *Config) { c.Events = []string{"checkout.session.completed"} }), []string{`"crm": events: pattern "checkout.session.completed"`}},
		{"concurrency", with(func(c *Config) { c.Concurrency = 1000 }), []string{`"crm": concurrency: want 1 to 100`}},
		{"bus with secret", []Config{{Name: "b", Bus: "orders", Events: []string{"*"}, Secret: testSecretARN}}, []string{`"b": secret, header, header_secret: only for a url`}},
		{"twice", []Config{ok, ok}, []string{`"crm": name: used twice`}},
		{"all at once", []Config{{Name: "x"}, {Name: "y", URL: "http://10.0.0.1"}}, []string{`"x": url or bus`, `"x": events`, `"y": url: want https://`, `"y": secret`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.cfgs, false)
			if err == nil {
				t.Fatal("Validate = nil; want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q; want it to say %q", err, w)
				}
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	cfgs := []Config{
		{Name: "crm", URL: "https://crm.example.com/in", Events: []string{"*"}, Secret: testSecretARN},
		{Name: "arn-bus", Bus: "arn:aws:events:eu-west-1:123456789012:event-bus/orders", Events: []string{"shopify:orders/*"}},
	}
	if err := Validate(cfgs, false); err != nil {
		t.Errorf("Validate = %v; want nil", err)
	}
	if _, err := Parse(`[{"name":"x","bus":"b","events":["*"],"secrets":"typo"}]`, false); err == nil {
		t.Error("Parse with an unknown field = nil error; want one")
	}
}

// TestLocalHTTPOnlyInTheLocalStack: plain http:// to a loopback host is
// accepted under the local stack's rules only; elsewhere it is refused
// under both.
func TestLocalHTTPOnlyInTheLocalStack(t *testing.T) {
	for _, url := range []string{"http://127.0.0.1:8080/in", "http://[::1]:8080/in", "http://localhost:9/in"} {
		cfgs := []Config{{Name: "local", URL: url, Events: []string{"*"}, Secret: testSecretARN}}
		if err := Validate(cfgs, true); err != nil {
			t.Errorf("%s, local stack: %v; want accepted", url, err)
		}
		if err := Validate(cfgs, false); err == nil || !strings.Contains(err.Error(), "local stack only") {
			t.Errorf("%s, deployed: %v; want refused, saying http:// is for the local stack only", url, err)
		}
		if _, err := New(cfgs, Options{Secrets: testSecrets}); err == nil {
			t.Errorf("New(%s) without LocalHTTP = nil error; want refused", url)
		}
	}
	remote := []Config{{Name: "remote", URL: "http://crm.example.com/in", Events: []string{"*"}, Secret: testSecretARN}}
	if err := Validate(remote, true); err == nil || !strings.Contains(err.Error(), "only to 127.0.0.1") {
		t.Errorf("plain http:// off this machine, local stack: %v; want refused", err)
	}
}

// TestDeployedDestinationsNeverReachTheirOwnMachine: deployed, the
// machine a processor runs on is the Lambda's own (its runtime's API on
// 127.0.0.1:9001) and link-local addresses are the platform's, so an
// https:// URL naming one is refused too, as is a name that resolves to
// one when the delivery dials it; the local stack delivers there, and a
// private address (a VPC) is anyone's to use.
func TestDeployedDestinationsNeverReachTheirOwnMachine(t *testing.T) {
	for _, url := range []string{"https://127.0.0.1:9001/2018-06-01/runtime/invocation/next", "https://localhost/in", "https://LOCALHOST./in",
		"https://hooks.localhost/in", "https://[::1]/in", "https://[::ffff:127.0.0.1]/in", "https://0.0.0.0:9001/in",
		"https://169.254.169.254/latest/meta-data/", "https://[fe80::1]/in"} {
		cfgs := []Config{{Name: "own", URL: url, Events: []string{"*"}, Secret: testSecretARN}}
		if err := Validate(cfgs, false); err == nil || !strings.Contains(err.Error(), "this machine") {
			t.Errorf("%s, deployed: %v; want refused", url, err)
		}
		if err := Validate(cfgs, true); err != nil {
			t.Errorf("%s, local stack: %v; want accepted", url, err)
		}
	}
	for _, url := range []string{"https://10.0.12.7/in", "https://crm.example.com/in", "https://127.example.com/in"} {
		if err := Validate([]Config{{Name: "far", URL: url, Events: []string{"*"}, Secret: testSecretARN}}, false); err != nil {
			t.Errorf("%s, deployed: %v; want accepted", url, err)
		}
	}
	// A name is known only when it is dialed: "localhost" stands for one
	// that a DNS answer points at this machine.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	named := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for _, local := range []bool{false, true} {
		c := newHTTPClient(2*time.Second, local)
		c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // the test server's own certificate
		resp, err := c.Get(named)
		if err == nil {
			_ = resp.Body.Close()
		}
		if refused := err != nil && strings.Contains(err.Error(), "this machine"); refused == local {
			t.Errorf("dial %s, local stack %v: %v", named, local, err)
		}
	}
}
