package destination

import (
	"fmt"
	"strings"
)

// checkPattern accepts "*" and "provider:type" where either side may hold
// * globs.
func checkPattern(p string) error {
	if p == "*" {
		return nil
	}
	prov, typ, ok := strings.Cut(p, ":")
	if !ok || prov == "" || typ == "" {
		return fmt.Errorf(`pattern %q: want "provider:type" (either may use *) or "*"`, p)
	}
	return nil
}

// matches reports whether the event of provider and eventType matches one
// of c's patterns.
func (c Config) matches(provider, eventType string) bool {
	subject := provider + ":" + eventType
	for _, p := range c.Events {
		if p == "*" || glob(p, subject) {
			return true
		}
	}
	return false
}

// glob reports whether s matches pattern, in which * matches any run of
// characters (none included) and every other character itself.
func glob(pattern, s string) bool {
	// Greedy with backtracking to the last star: linear in practice.
	p, i, star, mark := 0, 0, -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
