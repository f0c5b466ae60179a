package iamcheck

import (
	"fmt"
	"path"
	"strings"
)

// Access is one permission a request needs: Action on one of Resources (an
// SES send is allowed by the sending address's identity or its domain's),
// with the condition keys the request sets.
type Access struct {
	Action    string   `json:"action"`
	Resources []string `json:"resources"`
	// LeadingKeys are the partition key values a DynamoDB request touches,
	// IAM's dynamodb:LeadingKeys.
	LeadingKeys []string `json:"leadingKeys,omitempty"`
}

func (a Access) String() string {
	return a.Action + " on " + strings.Join(a.Resources, " or ")
}

// Statement is one statement of a resolved policy document.
type Statement struct {
	Where                                    string // "policy 1 statement 0 (InboxClaim)"
	Effect                                   string
	Action, NotAction, Resource, NotResource []string
	Condition                                map[string]map[string][]string // operator → key → values
}

// parseStatement reads a resolved policy statement.
func parseStatement(v any, where string) (Statement, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Statement{}, fmt.Errorf("%s is %v, want a mapping", where, v)
	}
	st := Statement{Where: where}
	if sid, ok := m["Sid"].(string); ok {
		st.Where += " (" + sid + ")"
	}
	st.Effect, _ = m["Effect"].(string)
	if st.Effect != "Allow" && st.Effect != "Deny" {
		return Statement{}, fmt.Errorf("%s: Effect is %v, want Allow or Deny", st.Where, m["Effect"])
	}
	for key, dst := range map[string]*[]string{"Action": &st.Action, "NotAction": &st.NotAction, "Resource": &st.Resource, "NotResource": &st.NotResource} {
		if m[key] == nil {
			continue
		}
		list, err := StringList(m[key])
		if err != nil {
			return Statement{}, fmt.Errorf("%s: %s %w", st.Where, key, err)
		}
		*dst = list
	}
	if (st.Action == nil) == (st.NotAction == nil) || (st.Resource == nil) == (st.NotResource == nil) {
		return Statement{}, fmt.Errorf("%s: want one of Action and NotAction, and one of Resource and NotResource", st.Where)
	}
	if _, ok := m["NotPrincipal"]; ok {
		return Statement{}, fmt.Errorf("%s: NotPrincipal in a role's policy", st.Where)
	}
	if c, ok := m["Condition"]; ok {
		cond, err := parseCondition(c)
		if err != nil {
			return Statement{}, fmt.Errorf("%s: Condition: %w", st.Where, err)
		}
		st.Condition = cond
	}
	return st, nil
}

func parseCondition(v any) (map[string]map[string][]string, error) {
	ops, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("is %v, want a mapping", v)
	}
	out := map[string]map[string][]string{}
	for op, keys := range ops {
		km, ok := keys.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is %v, want a mapping", op, keys)
		}
		out[op] = map[string][]string{}
		for k, vals := range km {
			list, err := StringList(vals)
			if err != nil {
				return nil, fmt.Errorf("%s %s %w", op, k, err)
			}
			out[op][k] = list
		}
	}
	return out, nil
}

// StringList takes a template value that is a string or a non-empty list
// of strings.
func StringList(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("has %v, want strings", e)
			}
			out = append(out, s)
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("is %v, want a string or a list of strings", v)
}

// Match is the part of a statement that matched a request: the indexes of
// the Action and Resource entries (-1 for NotAction and NotResource).
type Match struct {
	Statement, Action, Resource int
}

// matches reports whether st applies to a on resource, and which entries
// matched. A condition it cannot evaluate is an error.
func (st Statement) matches(a Access, resource string) (Match, bool, error) {
	m := Match{Action: -1, Resource: -1}
	if st.Action != nil {
		if m.Action = index(st.Action, a.Action, true); m.Action < 0 {
			return m, false, nil
		}
	} else if index(st.NotAction, a.Action, true) >= 0 {
		return m, false, nil
	}
	if st.Resource != nil {
		if m.Resource = index(st.Resource, resource, false); m.Resource < 0 {
			return m, false, nil
		}
	} else if index(st.NotResource, resource, false) >= 0 {
		return m, false, nil
	}
	ok, err := st.conditionHolds(a)
	if err != nil {
		return m, false, fmt.Errorf("%s: %w", st.Where, err)
	}
	return m, ok, nil
}

// index returns the first pattern of patterns that matches s, IAM's way:
// * any run of characters, ? any one; actions ignore case.
func index(patterns []string, s string, foldCase bool) int {
	for i, p := range patterns {
		if foldCase {
			p, s = strings.ToLower(p), strings.ToLower(s)
		}
		if wildcard(p, s) {
			return i
		}
	}
	return -1
}

// wildcard matches IAM's * and ? (path.Match would stop * at a slash, and
// reads [ and \ as special).
func wildcard(p, s string) bool {
	if !strings.ContainsAny(p, "*?") {
		return p == s
	}
	quoted := strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(p)
	// Each * may cross slashes: compare segment-free by replacing them.
	const sep = "\x00"
	ok, _ := path.Match(strings.ReplaceAll(quoted, "/", sep), strings.ReplaceAll(s, "/", sep))
	return ok
}

// conditionHolds evaluates the statement's Condition on a. It knows the
// string operators on dynamodb:LeadingKeys, the only condition key a
// function's request carries here; any other is an error, never a guess.
func (st Statement) conditionHolds(a Access) (bool, error) {
	for op, keys := range st.Condition {
		set, base, _ := strings.Cut(op, ":")
		if base == "" {
			set, base = "", op
		}
		var equal func(p, v string) bool
		switch base {
		case "StringEquals":
			equal = func(p, v string) bool { return p == v }
		case "StringLike":
			equal = wildcard
		default:
			return false, fmt.Errorf("condition operator %s is not evaluated by the check", op)
		}
		for key, want := range keys {
			if key != "dynamodb:LeadingKeys" {
				return false, fmt.Errorf("condition key %s is not evaluated by the check", key)
			}
			got := a.LeadingKeys
			in := func(v string) bool {
				for _, p := range want {
					if equal(p, v) {
						return true
					}
				}
				return false
			}
			var holds bool
			switch set {
			case "ForAllValues": // true for no values, as IAM has it
				holds = true
				for _, v := range got {
					holds = holds && in(v)
				}
			case "ForAnyValue", "":
				for _, v := range got {
					holds = holds || in(v)
				}
			default:
				return false, fmt.Errorf("condition operator %s is not evaluated by the check", op)
			}
			if !holds {
				return false, nil
			}
		}
	}
	return true, nil
}

// Decision is what IAM decides on one Access.
type Decision struct {
	Allowed bool
	// By are the Allow statements' entries that allowed it.
	By []Match
	// DeniedBy names the Deny statement that refused it, if one did.
	DeniedBy string
}

// decide evaluates a against a role's statements: allowed when some
// resource of a is allowed by an Allow statement and no Deny statement
// matches it.
func decide(stmts []Statement, a Access) (Decision, error) {
	var d Decision
	for _, r := range a.Resources {
		var by []Match
		denied := ""
		for i, st := range stmts {
			m, ok, err := st.matches(a, r)
			if err != nil {
				return Decision{}, err
			}
			if !ok {
				continue
			}
			m.Statement = i
			if st.Effect == "Deny" {
				denied = st.Where
				break
			}
			by = append(by, m)
		}
		if denied != "" {
			d.DeniedBy = denied
			continue
		}
		if len(by) > 0 {
			d.Allowed = true
			d.By = append(d.By, by...)
		}
	}
	if d.Allowed {
		d.DeniedBy = ""
	}
	return d, nil
}
