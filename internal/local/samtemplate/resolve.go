package samtemplate

import (
	"fmt"
	"strconv"
	"strings"
)

// Context says what the names in a template stand for in one deployment.
// Empty fields take the defaults "hookinbox", "us-east-1", "123456789012",
// "aws" and "amazonaws.com".
type Context struct {
	StackName, Region, AccountID, Partition, URLSuffix string

	// Params overrides parameter values; a parameter not in Params takes its
	// Default.
	Params map[string]string

	// Lookup returns the physical value of a template resource: attr "" for
	// !Ref (table name, queue URL, function name, API ID), "Arn" and so on
	// for !GetAtt. A template that refers to no resource needs no Lookup.
	Lookup func(logicalID, attr string) (string, error)
}

// WithDefaults returns c with its empty fields set to the defaults named on
// Context, as Resolve sees it.
func (c Context) WithDefaults() Context {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&c.StackName, "hookinbox")
	def(&c.Region, "us-east-1")
	def(&c.AccountID, "123456789012")
	def(&c.Partition, "aws")
	def(&c.URLSuffix, "amazonaws.com")
	return c
}

// Resolve returns v with every intrinsic evaluated in c. Maps and lists are
// copied; an element or key whose value is !Ref AWS::NoValue is dropped.
// Numbers and booleans stay as they are, except inside !Sub, which formats
// them. Conditions are evaluated for !If. The intrinsics are the ones
// template.yaml uses: Ref, GetAtt, Sub, If, Equals and Not. v is typically a value taken
// from t, such as a resource's Properties or an output's Value.
func (t *Template) Resolve(v any, c Context) (any, error) {
	r := &resolver{t: t, c: c.WithDefaults(), conds: map[string]bool{}, visiting: map[string]bool{}}
	out, err := r.resolve(v, "")
	if err != nil {
		return nil, err
	}
	if _, ok := out.(noValue); ok {
		return nil, nil
	}
	return out, nil
}

// ResolveString resolves v and requires a string; numbers and booleans are
// formatted.
func (t *Template) ResolveString(v any, c Context) (string, error) {
	out, err := t.Resolve(v, c)
	if err != nil {
		return "", err
	}
	s, err := ScalarString(out)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", describe(v), err)
	}
	return s, nil
}

// noValue is what !Ref AWS::NoValue resolves to before its key or list
// element is removed.
type noValue struct{}

type resolver struct {
	t        *Template
	c        Context
	conds    map[string]bool
	visiting map[string]bool
}

func join(path, elem string) string {
	if path == "" {
		return elem
	}
	if strings.HasPrefix(elem, "[") {
		return path + elem
	}
	return path + "." + elem
}

func at(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

func (r *resolver) resolve(v any, path string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			re, err := r.resolve(e, join(path, k))
			if err != nil {
				return nil, err
			}
			if _, ok := re.(noValue); !ok {
				out[k] = re
			}
		}
		return out, nil
	case []any:
		out := make([]any, 0, len(v))
		for i, e := range v {
			re, err := r.resolve(e, join(path, "["+strconv.Itoa(i)+"]"))
			if err != nil {
				return nil, err
			}
			if _, ok := re.(noValue); !ok {
				out = append(out, re)
			}
		}
		return out, nil
	case Ref:
		out, err := r.ref(v.Name)
		if err != nil {
			return nil, fmt.Errorf("%s!Ref %s: %w", at(path), v.Name, err)
		}
		return out, nil
	case GetAtt:
		out, err := r.getAtt(v.Resource, v.Attribute)
		if err != nil {
			return nil, fmt.Errorf("%s!GetAtt %s.%s: %w", at(path), v.Resource, v.Attribute, err)
		}
		return out, nil
	case Sub:
		return r.sub(v, path)
	case Fn:
		return r.fn(v, path)
	}
	return v, nil
}

// ref evaluates !Ref name: a pseudo parameter, a parameter or a resource.
func (r *resolver) ref(name string) (any, error) {
	c := r.c
	switch name {
	case "AWS::StackName":
		return c.StackName, nil
	case "AWS::Region":
		return c.Region, nil
	case "AWS::AccountId":
		return c.AccountID, nil
	case "AWS::Partition":
		return c.Partition, nil
	case "AWS::URLSuffix":
		return c.URLSuffix, nil
	case "AWS::NoValue":
		return noValue{}, nil
	}
	if p, ok := r.t.Parameters[name]; ok {
		val, ok := c.Params[name]
		if !ok {
			if !p.HasDefault {
				return nil, fmt.Errorf("parameter has no Default and no value in Context.Params")
			}
			val = p.Default
		}
		return val, nil
	}
	if _, ok := r.t.Resources[name]; ok {
		return r.lookup(name, "")
	}
	return nil, fmt.Errorf("no parameter or resource of that name")
}

func (r *resolver) getAtt(res, attr string) (any, error) {
	if _, ok := r.t.Resources[res]; !ok {
		return nil, fmt.Errorf("no resource %s", res)
	}
	return r.lookup(res, attr)
}

func (r *resolver) lookup(id, attr string) (string, error) {
	if r.c.Lookup == nil {
		return "", fmt.Errorf("resource %s needs Context.Lookup", id)
	}
	s, err := r.c.Lookup(id, attr)
	if err != nil {
		return "", fmt.Errorf("lookup: %w", err)
	}
	return s, nil
}

// sub evaluates !Sub: ${Name} is a variable, parameter, pseudo parameter or
// resource; ${Resource.Attr} is a GetAtt; ${!Text} is the literal ${Text}.
func (r *resolver) sub(s Sub, path string) (any, error) {
	vars := map[string]string{}
	for k, v := range s.Vars {
		rv, err := r.resolve(v, join(path, "Fn::Sub."+k))
		if err != nil {
			return nil, err
		}
		str, err := ScalarString(rv)
		if err != nil {
			return nil, fmt.Errorf("%s!Sub variable %s: %w", at(path), k, err)
		}
		vars[k] = str
	}

	var b strings.Builder
	rest := s.Format
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		rest = rest[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return nil, fmt.Errorf("%s!Sub %q: unclosed ${", at(path), s.Format)
		}
		name := rest[:j]
		rest = rest[j+1:]
		if lit, ok := strings.CutPrefix(name, "!"); ok {
			b.WriteString("${" + lit + "}")
			continue
		}
		name = strings.TrimSpace(name)
		if v, ok := vars[name]; ok {
			b.WriteString(v)
			continue
		}
		var (
			v   any
			err error
		)
		if res, attr, dotted := strings.Cut(name, "."); dotted && !strings.HasPrefix(name, "AWS::") {
			v, err = r.getAtt(res, attr)
		} else {
			v, err = r.ref(name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s!Sub ${%s}: %w", at(path), name, err)
		}
		str, err := ScalarString(v)
		if err != nil {
			return nil, fmt.Errorf("%s!Sub ${%s}: %w", at(path), name, err)
		}
		b.WriteString(str)
	}
}

// fn evaluates the other intrinsic functions.
func (r *resolver) fn(f Fn, path string) (any, error) {
	p := join(path, "Fn::"+f.Name)
	args, _ := f.Args.([]any)
	if n, ok := map[string]int{"If": 3, "Equals": 2, "Not": 1}[f.Name]; ok && len(args) != n {
		return nil, errorAt(p, "want a list of %d arguments, got %s", n, describe(f.Args))
	}
	switch f.Name {
	case "Condition":
		name, _ := f.Args.(string)
		return r.condition(name)
	case "If":
		return r.fnIf(args, p)
	case "Equals":
		return r.fnEquals(args, p)
	case "Not":
		return r.fnNot(args, p)
	}
	return nil, errorAt(p, "not supported")
}

// errorAt returns an error about the value at path p.
func errorAt(p, format string, a ...any) error {
	return fmt.Errorf("%s"+format, append([]any{at(p)}, a...)...)
}

// fnIf evaluates Fn::If [condition, then, else] at p.
func (r *resolver) fnIf(args []any, p string) (any, error) {
	name, ok := args[0].(string)
	if !ok {
		return nil, errorAt(p, "condition name is %s, want a string", describe(args[0]))
	}
	ok, err := r.condition(name)
	if err != nil {
		return nil, errorAt(p, "%w", err)
	}
	if ok {
		return r.resolve(args[1], join(p, "[1]"))
	}
	return r.resolve(args[2], join(p, "[2]"))
}

// fnEquals evaluates Fn::Equals [a, b] at p: whether a and b resolve to
// the same scalar.
func (r *resolver) fnEquals(args []any, p string) (any, error) {
	var sides [2]string
	for i := range sides {
		v, err := r.resolve(args[i], join(p, "["+strconv.Itoa(i)+"]"))
		if err != nil {
			return nil, err
		}
		if sides[i], err = ScalarString(v); err != nil {
			return nil, errorAt(p, "argument %d: %w", i, err)
		}
	}
	return sides[0] == sides[1], nil
}

// fnNot evaluates Fn::Not [condition] at p.
func (r *resolver) fnNot(args []any, p string) (any, error) {
	v, err := r.resolve(args[0], join(p, "[0]"))
	if err != nil {
		return nil, err
	}
	b, ok := v.(bool)
	if !ok {
		return nil, errorAt(p, "argument is %s, want a condition", describe(v))
	}
	return !b, nil
}

// condition evaluates the named entry of the Conditions section once.
func (r *resolver) condition(name string) (bool, error) {
	if b, ok := r.conds[name]; ok {
		return b, nil
	}
	def, ok := r.t.Conditions[name]
	if !ok {
		return false, fmt.Errorf("no condition %s", name)
	}
	if r.visiting[name] {
		return false, fmt.Errorf("condition %s refers to itself", name)
	}
	r.visiting[name] = true
	defer delete(r.visiting, name)
	v, err := r.resolve(def, "Conditions."+name)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("condition %s is %s, want true or false", name, describe(v))
	}
	r.conds[name] = b
	return b, nil
}
