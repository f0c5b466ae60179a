package destination

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// DefaultConcurrency is Config.Concurrency's default.
const DefaultConcurrency = 4

// maxConcurrency is the most Config.Concurrency may be.
const maxConcurrency = 100

// Config is one destination, as the processor's DESTINATIONS environment
// variable (a JSON array) and the `Destinations:` list of the file
// `hookinbox template --business` reads (YAML) say it, with the same
// field names in both.
type Config struct {
	// Name names the destination: [a-z0-9-], at most 40 characters, unique.
	// Its effect in the ledger is effectName(Name); changing it delivers
	// again, under a new webhook-id, every event not yet finished.
	Name string `json:"name" yaml:"name"`
	// URL is an HTTP destination: https://; in the local stack only
	// (LocalHTTPEnv), also http:// to a loopback host.
	URL string `json:"url,omitempty" yaml:"url,omitempty"`
	// Bus is an EventBridge destination: a bus name or ARN.
	Bus string `json:"bus,omitempty" yaml:"bus,omitempty"`
	// Events are the patterns "provider:type" an event must match one of,
	// with * matching any run of characters ("stripe:checkout.session.*",
	// "shopify:orders/*", "*").
	Events []string `json:"events" yaml:"events"`
	// Secret is the ARN of the Secrets Manager secret holding the
	// "whsec_..." signing secret; a comma list or JSON array in it is a
	// rotation, every one signing. Required for a URL.
	Secret string `json:"secret,omitempty" yaml:"secret,omitempty"`
	// Header and HeaderSecret add a static header: its name, and the ARN
	// of the secret holding its value, for tools that can only compare a
	// header.
	Header       string `json:"header,omitempty" yaml:"header,omitempty"`
	HeaderSecret string `json:"header_secret,omitempty" yaml:"header_secret,omitempty"`
	// Concurrency is how many deliveries to the destination one processor
	// instance makes at once; default DefaultConcurrency.
	Concurrency int `json:"concurrency,omitempty" yaml:"concurrency,omitempty"`
}

var (
	validName   = regexp.MustCompile(`^[a-z0-9-]{1,40}$`)
	validHeader = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)
	validBus    = regexp.MustCompile(`^(arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus/)?[A-Za-z0-9._\-/]{1,256}$`)
	validARN    = regexp.MustCompile(`^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$`)
)

// reservedHeaders are the headers a delivery sets itself.
var reservedHeaders = []string{"content-type", "content-length", "host", "webhook-id", "webhook-timestamp", "webhook-signature", "user-agent", "expect"}

// LocalHTTPEnv is the processor's variable that the local stack sets to
// "1", and no template sets: its destinations may then be plain http://
// to a loopback host (a sink on this machine). Deployed, in Lambda,
// loopback is the runtime's own API (127.0.0.1:9001), so every
// destination must be https://.
const LocalHTTPEnv = "DESTINATIONS_LOCAL_HTTP"

// Parse reads the DESTINATIONS value, a JSON array of Config ("" or
// whitespace: none), and validates it (Validate) with localHTTP.
func Parse(value string, localHTTP bool) ([]Config, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	var cfgs []Config
	if err := dec.Decode(&cfgs); err != nil {
		return nil, fmt.Errorf("DESTINATIONS: want a JSON array of destinations: %w", err)
	}
	if err := Validate(cfgs, localHTTP); err != nil {
		return nil, fmt.Errorf("DESTINATIONS: %w", err)
	}
	return withDefaults(cfgs), nil
}

// withDefaults returns cfgs with Concurrency set.
func withDefaults(cfgs []Config) []Config {
	for i := range cfgs {
		if cfgs[i].Concurrency == 0 {
			cfgs[i].Concurrency = DefaultConcurrency
		}
	}
	return cfgs
}

// Validate reports every problem of every destination in one error, each
// naming the destination and its field. Every URL must be https://, but
// with localHTTP (the local stack's rules) a plain http:// one to a
// loopback host is accepted too.
func Validate(cfgs []Config, localHTTP bool) error {
	var errs []error
	seen := map[string]bool{}
	for i, c := range cfgs {
		who := fmt.Sprintf("destination %d", i+1)
		if c.Name != "" {
			who = fmt.Sprintf("destination %q", c.Name)
		}
		for _, p := range c.problems(localHTTP) {
			errs = append(errs, fmt.Errorf("%s: %s", who, p))
		}
		if seen[c.Name] && c.Name != "" {
			errs = append(errs, fmt.Errorf("%s: name: used twice", who))
		}
		seen[c.Name] = true
	}
	return errors.Join(errs...)
}

// problems lists what is wrong with c, each starting with its field.
func (c Config) problems(localHTTP bool) []string {
	var ps problems
	if !validName.MatchString(c.Name) {
		ps.add("name: want 1 to 40 of a-z, 0-9 and -, got %q", c.Name)
	}
	c.targetProblems(&ps, localHTTP)
	c.secretProblems(&ps)
	c.eventProblems(&ps)
	return ps
}

// problems are what is wrong with a Config, in the order of its fields.
type problems []string

func (ps *problems) add(format string, args ...any) { *ps = append(*ps, fmt.Sprintf(format, args...)) }

// targetProblems adds what is wrong with c's url or bus.
func (c Config) targetProblems(ps *problems, localHTTP bool) {
	switch {
	case c.URL == "" && c.Bus == "":
		ps.add("url or bus: want one")
	case c.URL != "" && c.Bus != "":
		ps.add("url and bus: want one, not both")
	case c.URL != "":
		if err := checkURL(c.URL, localHTTP); err != nil {
			ps.add("url: %v", err)
		}
		if c.Secret == "" {
			ps.add("secret: want the ARN of the whsec_ signing secret")
		}
	case !validBus.MatchString(c.Bus):
		ps.add("bus: want an EventBridge bus name or ARN, got %q", c.Bus)
	}
}

// secretProblems adds what is wrong with c's secret and static header.
func (c Config) secretProblems(ps *problems) {
	if c.Bus != "" && (c.Secret != "" || c.Header != "" || c.HeaderSecret != "") {
		ps.add("secret, header, header_secret: only for a url")
	}
	if c.Secret != "" && !validARN.MatchString(c.Secret) {
		ps.add("secret: want a Secrets Manager secret ARN")
	}
	switch {
	case (c.Header == "") != (c.HeaderSecret == ""):
		ps.add("header and header_secret: want both or neither")
	case c.Header != "" && !validHeader.MatchString(c.Header):
		ps.add("header: want a header name (letters, digits, -), got %q", c.Header)
	case c.Header != "" && isReserved(c.Header):
		ps.add("header: %s is set by every delivery", c.Header)
	case c.HeaderSecret != "" && !validARN.MatchString(c.HeaderSecret):
		ps.add("header_secret: want a Secrets Manager secret ARN")
	}
}

// eventProblems adds what is wrong with c's events and concurrency.
func (c Config) eventProblems(ps *problems) {
	if len(c.Events) == 0 {
		ps.add(`events: want at least one pattern "provider:type" ("*" for every event)`)
	}
	for _, p := range c.Events {
		if err := checkPattern(p); err != nil {
			ps.add("events: %v", err)
		}
	}
	if c.Concurrency < 0 || c.Concurrency > maxConcurrency {
		ps.add("concurrency: want 1 to %d, got %d", maxConcurrency, c.Concurrency)
	}
}

func isReserved(header string) bool {
	for _, h := range reservedHeaders {
		if strings.EqualFold(h, header) {
			return true
		}
	}
	return false
}

// checkURL accepts an https:// URL to another machine (ownMachine), and
// with localHTTP an http:// one whose host is loopback (localhost,
// 127.0.0.0/8, ::1), or an https:// one to any host: plain HTTP never
// leaves the machine, and only the local stack has a sink there. A URL
// with user info is refused (put credentials in a header secret).
func checkURL(raw string, localHTTP bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL")
	}
	switch {
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("want an absolute URL with a host")
	case u.User != nil:
		return fmt.Errorf("want no user:password in it (use header and header_secret)")
	case u.Scheme == "https" && !localHTTP && ownMachine(u.Hostname()):
		return fmt.Errorf("want a host other than this machine (%s): deployed, the processor's machine is the Lambda's own, "+
			"with its runtime's API on 127.0.0.1:9001; only the local stack delivers to this machine", u.Hostname())
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && localHTTP && loopback(u.Hostname()):
		return nil
	case u.Scheme == "http" && localHTTP:
		return fmt.Errorf("want https:// (plain http:// only to 127.0.0.1, ::1 or localhost)")
	case u.Scheme == "http":
		return fmt.Errorf("want https://: plain http:// is for the local stack only (hookinbox dev delivers to a sink on this machine); " +
			"deployed, loopback is the Lambda runtime's own API")
	}
	return fmt.Errorf("want https://, got scheme %q", u.Scheme)
}

// ownMachine reports whether host names the machine the processor runs
// on, or its link: localhost or a name under it, a loopback, unspecified
// (0.0.0.0, ::) or link-local address (169.254.0.0/16, fe80::/10).
func ownMachine(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ownAddress(ip)
}

// ownAddress reports whether ip is a loopback, unspecified or link-local
// address: the machine's own, or its link's.
func ownAddress(ip net.IP) bool {
	return ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast()
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsBus reports whether c delivers to an EventBridge bus.
func (c Config) IsBus() bool { return c.Bus != "" }

// SecretARNs returns the ARNs of the secrets c reads.
func (c Config) SecretARNs() []string {
	var arns []string
	for _, a := range []string{c.Secret, c.HeaderSecret} {
		if a != "" {
			arns = append(arns, a)
		}
	}
	return arns
}
