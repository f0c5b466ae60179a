package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Subject names a person an event is about: "<provider>:<customer id>"
// (stripe:cus_123, shopify:115310627314723954) or "email:<address>",
// the address in lower case. The inbox indexes events by subject, keyed
// and hashed, so a person's events can be erased or listed on request.
type Subject string

// CustomerSubject returns the subject of the customer id at provider, or
// "" when id is empty.
func CustomerSubject(provider, id string) Subject {
	id = strings.TrimSpace(id)
	if id == "" {
		return ""
	}
	return Subject(provider + ":" + id)
}

// EmailSubject returns the subject of an email address, trimmed and in
// lower case, or "" when addr is not an address.
func EmailSubject(addr string) Subject {
	addr = strings.ToLower(strings.TrimSpace(addr))
	at := strings.LastIndexByte(addr, '@')
	if at < 1 || at == len(addr)-1 || strings.ContainsAny(addr, " \t\r\n") {
		return ""
	}
	return Subject("email:" + addr)
}

// ParseSubject reads a subject as a person gives it: "<provider>:<id>" or
// "email:<address>".
func ParseSubject(s string) (Subject, error) {
	kind, value, ok := strings.Cut(strings.TrimSpace(s), ":")
	if kind == "email" {
		if sub := EmailSubject(value); sub != "" {
			return sub, nil
		}
		return "", fmt.Errorf("subject %q: not an email address", s)
	}
	if !ok || checkName(kind) != nil || strings.TrimSpace(value) == "" {
		return "", fmt.Errorf("subject %q: want <provider>:<customer id> or email:<address>", s)
	}
	return CustomerSubject(kind, value), nil
}

// Emails returns the subjects of the email addresses in the JSON raw: every
// string under a key that names an email ("email", "customer_email",
// "shopperEmail", ...), at any depth.
func Emails(raw []byte) []Subject {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var out []Subject
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(k, x)
			}
		case []any:
			for _, x := range v {
				walk(key, x)
			}
		case string:
			if strings.Contains(strings.ToLower(key), "email") {
				if s := EmailSubject(v); s != "" {
					out = append(out, s)
				}
			}
		}
	}
	walk("", v)
	slices.Sort(out) // map order is random; the index writes the same either way
	return out
}

// JSONID returns a JSON id, string or number, as text; "" for null or
// anything else.
func JSONID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// PrivacyRequest is a provider's request, sent as an event, to erase or to
// list what is held about people (Shopify's mandatory compliance
// webhooks).
type PrivacyRequest struct {
	Erase    bool      // erase; false lists what is held
	Subjects []Subject // whom it names: people, or an account (a shop)
	// Account, when set, is the account of the provider the request
	// comes from (a shop, as the signed body names it): of the
	// provider's own events only those about Account are erased or
	// listed, so one tenant's request touches only that tenant's; other
	// providers' events are found by Subjects alone.
	Account Subject
	// Reference is the provider's own name for the request, for the
	// record of a data request: "data request <id>"; no personal data.
	Reference string
}
