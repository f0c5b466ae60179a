package iamcheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// exemptionKey is the key of a function's Metadata in template.yaml that
// lists the grants its role keeps although no test exercises them, each
// with why: [{Action, Resource, Why}].
const exemptionKey = "UnexercisedGrants"

// Grant is one action entry of one statement of a function's role.
type Grant struct {
	Function string
	Where    string // role, policy and statement
	Action   string
	key      string
}

func (g Grant) String() string { return g.Function + " " + g.Action + " (" + g.Where + ")" }

// Report is what Check found.
type Report struct {
	// Refused are the recorded calls the roles do not allow, each naming
	// the test, the function, the action and the resource.
	Refused []string
	// Unused are the grants no recorded call used and no exemption
	// explains.
	Unused []string
	// Problems are records or roles the check cannot read, and exemptions
	// that name no grant or give no reason.
	Problems []string
	// Grants are every action entry of every role in the checked stacks
	// and in a deployment with every optional parameter set.
	Grants []Grant
}

// OK reports whether the report found nothing.
func (r Report) OK() bool { return len(r.Refused)+len(r.Unused)+len(r.Problems) == 0 }

func (r Report) String() string {
	var b strings.Builder
	for _, s := range [][]string{r.Problems, r.Refused, r.Unused} {
		for _, l := range s {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// role is a function's role resolved in one stack: its statements and, for
// each, the grant keys of its action entries.
type role struct {
	name  string
	stmts []Statement
	keys  [][]string
}

// Check evaluates every recorded call against the role its function has
// in the SAM-translated template tpl, resolved in the call's stack; then
// lists every grant no call used. Grants are counted over the recorded
// stacks and over one deployment with every optional parameter set, so a
// statement the tests never switch on is reported too.
func Check(tpl *samtemplate.Template, recs []Recorded) Report {
	return check(tpl, recs, "")
}

// Without returns Check's report with the action entry of grant removed
// from its statement, as if template.yaml did not grant it.
func Without(tpl *samtemplate.Template, recs []Recorded, g Grant) Report {
	return check(tpl, recs, g.key)
}

// checker is one Check: what it found so far.
type checker struct {
	tpl        *samtemplate.Template
	drop       string // the grant key left out (Without)
	rep        Report
	used       map[string]bool  // grant key → a call used it
	grants     map[string]Grant // grant key → grant
	exempt     map[string]bool  // grant key → explained
	exemptions map[string]bool  // "function action resource" → matched a grant
}

func check(tpl *samtemplate.Template, recs []Recorded, drop string) Report {
	k := &checker{tpl: tpl, drop: drop, used: map[string]bool{}, grants: map[string]Grant{},
		exempt: map[string]bool{}, exemptions: map[string]bool{}}
	for _, rec := range recs {
		roles := k.roles(rec.Stack)
		k.addGrants(roles, true)
		for _, call := range rec.Calls {
			k.call(rec.Stack, roles, call)
		}
	}
	if len(recs) > 0 {
		k.addGrants(k.roles(everything(tpl, recs[0].Stack)), false)
	}
	return k.report()
}

// roles returns the roles of the functions deployed in st, and notes
// their problems and exemptions.
func (k *checker) roles(st Stack) map[string]role {
	c := deployedIn(k.tpl, st)
	roles, problems := roles(k.tpl, c, k.drop)
	k.rep.Problems = append(k.rep.Problems, prefix(st, problems)...)
	markExempt(k.tpl, c, roles, k.exempt, k.exemptions, &k.rep)
	return roles
}

// addGrants notes every grant of roles; replace says whether a grant
// already noted is noted again.
func (k *checker) addGrants(roles map[string]role, replace bool) {
	for fn, r := range roles {
		for i, st := range r.stmts {
			for j, key := range r.keys[i] {
				if _, ok := k.grants[key]; ok && !replace {
					continue
				}
				k.grants[key] = Grant{Function: fn, Where: st.Where, Action: st.actionAt(j), key: key}
			}
		}
	}
}

// call checks one recorded call, made in stack st, against roles, and
// notes the grants that allowed it.
func (k *checker) call(st Stack, roles map[string]role, call Call) {
	r, ok := roles[call.Function]
	switch {
	case call.Error != "":
		k.rep.Problems = append(k.rep.Problems, fmt.Sprintf("%s: %s made a request the check cannot map: %s", where(st), call.Function, call.Error))
		return
	case !ok:
		k.rep.Refused = append(k.rep.Refused, fmt.Sprintf("%s: %s is not a function of the template in this deployment, yet it called %v", where(st), call.Function, call.Access))
		return
	}
	for _, a := range call.Access {
		d, err := decide(r.stmts, a)
		if err != nil {
			k.rep.Problems = append(k.rep.Problems, fmt.Sprintf("%s: %s %s: %v", where(st), call.Function, a, err))
			continue
		}
		if !d.Allowed {
			why := "no statement allows it"
			if d.DeniedBy != "" {
				why = "denied by " + d.DeniedBy
			}
			k.rep.Refused = append(k.rep.Refused, fmt.Sprintf("%s: %s may not %s: %s's role %s refuses it (%s)", where(st), call.Function, a, call.Function, r.name, why))
		}
		for _, m := range d.By {
			if m.Action >= 0 {
				k.used[r.keys[m.Statement][m.Action]] = true
				continue
			}
			for _, key := range r.keys[m.Statement] {
				k.used[key] = true
			}
		}
	}
}

// report returns the report: the exemptions that matched no grant, the
// grants no call used, each list sorted and without repeats.
func (k *checker) report() Report {
	rep := k.rep
	for e, ok := range k.exemptions {
		if !ok {
			rep.Problems = append(rep.Problems, fmt.Sprintf("template.yaml: %s names a grant the role does not have in any checked deployment: remove it", e))
		}
	}
	for key, g := range k.grants {
		rep.Grants = append(rep.Grants, g)
		if !k.used[key] && !k.exempt[key] {
			rep.Unused = append(rep.Unused, fmt.Sprintf("%s's role grants %s (%s) but no recorded request used it: remove it, or say why in the function's Metadata %s", g.Function, g.Action, g.Where, exemptionKey))
		}
	}
	sort.Slice(rep.Grants, func(i, j int) bool { return rep.Grants[i].key < rep.Grants[j].key })
	for _, s := range []*[]string{&rep.Refused, &rep.Unused, &rep.Problems} {
		*s = dedupe(*s)
	}
	return rep
}

func (st Statement) actionAt(j int) string {
	if st.Action != nil {
		return st.Action[j]
	}
	return "NotAction " + strings.Join(st.NotAction, ",")
}

func where(st Stack) string {
	if st.Test != "" {
		return st.Test + " (stack " + st.Name + ")"
	}
	return "stack " + st.Name
}

func prefix(st Stack, problems []string) []string {
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = where(st) + ": " + p
	}
	return out
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// deployedIn resolves the template as deployed in st: its parameters, and
// the physical names it recorded; a resource it did not create (its
// Condition was false there) is named as CloudFormation would.
func deployedIn(tpl *samtemplate.Template, st Stack) samtemplate.Context {
	c := samtemplate.Context{StackName: st.Name, Region: st.Region, AccountID: st.AccountID, Params: st.Params}
	c.Lookup = func(id, attr string) (string, error) {
		if v, ok := st.Resources[id][attr]; ok {
			return v, nil
		}
		name := st.Name + "-" + id
		switch tpl.Resources[id].Type {
		case "AWS::SQS::Queue":
			switch attr {
			case "Arn":
				return "arn:aws:sqs:" + st.Region + ":" + st.AccountID + ":" + name, nil
			case "", "QueueUrl":
				return "http://sqs.local/" + st.AccountID + "/" + name, nil
			}
		case "AWS::DynamoDB::Table":
			switch attr {
			case "Arn":
				return "arn:aws:dynamodb:" + st.Region + ":" + st.AccountID + ":table/" + name, nil
			case "":
				return name, nil
			}
		case "":
			return "", fmt.Errorf("no resource %s", id)
		}
		if attr == "" {
			return name, nil
		}
		return "", fmt.Errorf("%s %s: attribute %s not recorded", tpl.Resources[id].Type, id, attr)
	}
	return c
}

// everything is st with every parameter whose default is empty set: the
// secrets' ARNs and the optional features, so every optional statement is
// in the roles.
func everything(tpl *samtemplate.Template, st Stack) Stack {
	full := st
	full.Name, full.Test = st.Name+"-every-parameter", "a deployment with every optional parameter set"
	full.Params = map[string]string{}
	for k, v := range st.Params {
		full.Params[k] = v
	}
	for name, p := range tpl.Parameters {
		if p.Default != "" || full.Params[name] != "" {
			continue
		}
		full.Params[name] = "local-" + name
		if strings.HasSuffix(name, "Arn") {
			full.Params[name] = "arn:aws:secretsmanager:" + st.Region + ":" + st.AccountID + ":secret:" + name + "-AbCdEf"
		}
	}
	return full
}

// roles returns the role of every function of tpl deployed in c, by the
// function's logical ID, without the grant drop.
func roles(tpl *samtemplate.Template, c samtemplate.Context, drop string) (map[string]role, []string) {
	out := map[string]role{}
	var problems []string
	for _, fn := range tpl.ByType("AWS::Lambda::Function") {
		if !holds(tpl, c, tpl.Resources[fn].Condition) {
			continue
		}
		att, ok := tpl.Resources[fn].Properties["Role"].(samtemplate.GetAtt)
		if !ok || tpl.Resources[att.Resource].Type != "AWS::IAM::Role" {
			problems = append(problems, fmt.Sprintf("%s's Role is not a role of the template, whose policies could be checked", fn))
			continue
		}
		r, p := roleIn(tpl, c, att.Resource, drop)
		out[fn] = r
		problems = append(problems, p...)
	}
	return out, problems
}

// roleIn returns the role name's statements resolved in c, without the
// grant drop.
func roleIn(tpl *samtemplate.Template, c samtemplate.Context, name, drop string) (role, []string) {
	r := role{name: name}
	var problems []string
	policies, _ := tpl.Resources[name].Properties["Policies"].([]any)
	for i, p := range policies {
		pm, _ := p.(map[string]any)
		policy, _ := pm["PolicyName"].(string)
		doc, _ := pm["PolicyDocument"].(map[string]any)
		stmts, ok := doc["Statement"].([]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s policy %d: Statement is not a list", name, i))
			continue
		}
		for j, s := range stmts {
			v, err := tpl.Resolve(s, c)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s policy %d statement %d: %v", name, i, j, err))
				continue
			}
			if v == nil { // !If [..., !Ref AWS::NoValue]
				continue
			}
			st, err := parseStatement(v, fmt.Sprintf("%s policy %s statement %d", name, policy, j))
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			st, keys := grantKeys(st, fmt.Sprintf("%s|%d|%d|", name, i, j), drop)
			if len(keys) == 0 {
				continue
			}
			r.stmts = append(r.stmts, st)
			r.keys = append(r.keys, keys)
		}
	}
	return r, problems
}

// grantKeys returns st, without its action entry drop when drop is one of
// them, and the grant key of each action entry (base and the entry's
// index; one key for a NotAction).
func grantKeys(st Statement, base, drop string) (Statement, []string) {
	n := len(st.Action)
	if st.Action == nil {
		n = 1
	}
	var keys []string
	for a := 0; a < n; a++ {
		keys = append(keys, fmt.Sprintf("%s%d", base, a))
	}
	if drop != "" && strings.HasPrefix(drop, base) && st.Action != nil {
		var a int
		fmt.Sscanf(strings.TrimPrefix(drop, base), "%d", &a)
		st.Action = append(append([]string{}, st.Action[:a]...), st.Action[a+1:]...)
		keys = append(append([]string{}, keys[:a]...), keys[a+1:]...)
	}
	return st, keys
}

func holds(tpl *samtemplate.Template, c samtemplate.Context, cond string) bool {
	if cond == "" {
		return true
	}
	v, err := tpl.Resolve(samtemplate.Fn{Name: "Condition", Args: cond}, c)
	b, _ := v.(bool)
	return err == nil && b
}

// markExempt marks the grants the functions' Metadata explain in c, and
// records which exemptions matched a grant.
func markExempt(tpl *samtemplate.Template, c samtemplate.Context, roles map[string]role, exempt, seen map[string]bool, rep *Report) {
	for fn, r := range roles {
		md, _ := tpl.Resources[fn].Metadata[exemptionKey].([]any)
		for i, e := range md {
			em, _ := e.(map[string]any)
			action, _ := em["Action"].(string)
			res, err := tpl.ResolveString(em["Resource"], c)
			if why, _ := em["Why"].(string); err != nil || action == "" || strings.TrimSpace(why) == "" {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s Metadata %s[%d] needs Action, Resource and Why (%v)", fn, exemptionKey, i, err))
				continue
			}
			name := fmt.Sprintf("%s's %s[%d] (%s)", fn, exemptionKey, i, action)
			if _, ok := seen[name]; !ok {
				seen[name] = false
			}
			for si, st := range r.stmts {
				for ai, k := range r.keys[si] {
					if st.Action == nil || !strings.EqualFold(st.Action[ai], action) || index(st.Resource, res, false) < 0 {
						continue
					}
					exempt[k] = true
					seen[name] = true
				}
			}
		}
	}
}
