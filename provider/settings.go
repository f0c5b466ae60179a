package provider

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Settings reads a provider's or a function's settings from its
// environment (Env.Settings) and reports every missing or invalid one in
// one error (Err), so a misconfigured deployment is fixed in one go
// rather than one cold start per key. Not safe for concurrent use.
type Settings struct {
	get      func(string) string
	missing  []string
	problems []string
}

// Required returns the key's value, noting it as missing when empty.
func (r *Settings) Required(key string) string {
	v := strings.TrimSpace(r.get(key))
	if v == "" {
		r.missing = append(r.missing, key)
	}
	return v
}

// String returns the key's value, or def when empty.
func (r *Settings) String(key, def string) string {
	if v := strings.TrimSpace(r.get(key)); v != "" {
		return v
	}
	return def
}

// Window returns the key as Duration does, but also accepts zero ("0s",
// "0"): a window that may be empty.
func (r *Settings) Window(key string, def time.Duration) time.Duration {
	v := strings.TrimSpace(r.get(key))
	if d, err := time.ParseDuration(v); err == nil && d == 0 || v == "0" {
		return 0
	}
	return r.Duration(key, def)
}

// Duration returns the key as a Go duration ("300s", "2m"), a bare number
// meaning seconds, or def when empty.
func (r *Settings) Duration(key string, def time.Duration) time.Duration {
	v := strings.TrimSpace(r.get(key))
	if v == "" {
		return def
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.problems = append(r.problems, fmt.Sprintf("%s=%q is not a positive duration like 300s", key, v))
		return def
	}
	return d
}

// Int returns the key as a positive integer, or def when empty.
func (r *Settings) Int(key string, def int64) int64 {
	v := strings.TrimSpace(r.get(key))
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		r.problems = append(r.problems, fmt.Sprintf("%s=%q is not a positive integer", key, v))
		return def
	}
	return n
}

// List returns the key split on commas, trimmed, without empty entries.
func (r *Settings) List(key string) []string { return split(r.get(key)) }

// split splits a comma-separated list, trimming spaces and dropping empty
// entries; it returns nil when nothing is left.
func split(s string) []string {
	var out []string
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Problem records a problem found by the caller (e.g. "set A or B").
func (r *Settings) Problem(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// Err returns every missing key and every problem in one error, or nil.
func (r *Settings) Err() error {
	var parts []string
	if len(r.missing) > 0 {
		m := append([]string(nil), r.missing...)
		sort.Strings(m)
		parts = append(parts, "missing "+strings.Join(m, ", "))
	}
	parts = append(parts, r.problems...)
	if len(parts) == 0 {
		return nil
	}
	return errors.New("configuration: " + strings.Join(parts, "; "))
}
