package samtemplate

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Ref is !Ref Name (or {Ref: Name}): a parameter, a pseudo parameter such as
// AWS::Region, or a resource's physical ID.
type Ref struct{ Name string }

// GetAtt is !GetAtt Resource.Attribute (or the list form, or Fn::GetAtt). An
// attribute with dots (Endpoint.Address) keeps everything after the first dot.
type GetAtt struct{ Resource, Attribute string }

// Sub is !Sub Format or !Sub [Format, Vars] (or Fn::Sub). Vars is nil for the
// one-argument form.
type Sub struct {
	Format string
	Vars   map[string]any
}

// Fn is one of the other intrinsics the template uses: Name is If, Equals or
// Not (without "Fn::"), or "Condition" to evaluate a named condition with
// Resolve; Args are its parsed arguments.
type Fn struct {
	Name string
	Args any
}

// knownFns lists the functions a short tag or Fn:: key may carry: the ones
// template.yaml uses. Any other (Join, Select, FindInMap, ...) is an error at
// parse time, so a template that starts using one fails its tests until this
// package learns it.
var knownFns = map[string]bool{"Ref": true, "GetAtt": true, "Sub": true, "If": true, "Equals": true, "Not": true}

// convert turns a YAML node into plain Go values and intrinsic types.
func convert(n *yaml.Node) (any, error) {
	var v any
	var err error
	switch n.Kind {
	case yaml.AliasNode:
		return convert(n.Alias)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return convert(n.Content[0])
	case yaml.MappingNode:
		v, err = convertMapping(n)
	case yaml.SequenceNode:
		v, err = convertSequence(n)
	case yaml.ScalarNode:
		v, err = convertScalar(n)
	default:
		err = fmt.Errorf("line %d: unexpected YAML node kind %v", n.Line, n.Kind)
	}
	if err != nil {
		return nil, err
	}
	tag := n.Tag
	if tag == "" || strings.HasPrefix(tag, "!!") || !strings.HasPrefix(tag, "!") {
		return v, nil
	}
	name := strings.TrimPrefix(tag, "!")
	if !knownFns[name] {
		return nil, fmt.Errorf("line %d: tag %s is not supported", n.Line, tag)
	}
	fn, err := intrinsic(name, v)
	if err != nil {
		return nil, fmt.Errorf("line %d: %s: %w", n.Line, tag, err)
	}
	return fn, nil
}

// convertMapping converts a mapping: a map, or the intrinsic its long
// form stands for ({Ref: x}, {"Fn::Name": args}).
func convertMapping(n *yaml.Node) (any, error) {
	m := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, vn := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: mapping key is not a scalar", k.Line)
		}
		if _, dup := m[k.Value]; dup {
			return nil, fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
		}
		val, err := convert(vn)
		if err != nil {
			return nil, err
		}
		m[k.Value] = val
	}
	fn, ok, err := longForm(m, n.Line)
	switch {
	case err != nil:
		return nil, err
	case ok:
		return fn, nil
	}
	return m, nil
}

// convertSequence converts a sequence into a list.
func convertSequence(n *yaml.Node) (any, error) {
	l := make([]any, 0, len(n.Content))
	for _, c := range n.Content {
		val, err := convert(c)
		if err != nil {
			return nil, err
		}
		l = append(l, val)
	}
	return l, nil
}

// convertScalar converts a scalar: nil, a bool or a number, or its text.
func convertScalar(n *yaml.Node) (any, error) {
	var v any
	switch tag := n.ShortTag(); {
	case tag == "!!null":
		return nil, nil
	case tag == "!!bool" || tag == "!!int" || tag == "!!float":
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	}
	return n.Value, nil // !!str, !!timestamp, !!binary and custom tags keep their text
}

// longForm recognises a one-key mapping {Ref: x} or {"Fn::Name": args} and
// returns the intrinsic it stands for.
func longForm(m map[string]any, line int) (any, bool, error) {
	if len(m) != 1 {
		return nil, false, nil
	}
	for k, args := range m {
		name, isFn := strings.CutPrefix(k, "Fn::")
		switch {
		case k == "Ref":
		case !isFn:
			return nil, false, nil
		case !knownFns[name]:
			return nil, false, fmt.Errorf("line %d: function %s is not supported", line, k)
		}
		fn, err := intrinsic(name, args)
		if err != nil {
			return nil, false, fmt.Errorf("line %d: %s: %w", line, k, err)
		}
		return fn, true, nil
	}
	return nil, false, nil
}

// intrinsic builds the typed value for function name with parsed args.
func intrinsic(name string, args any) (any, error) {
	switch name {
	case "Ref":
		s, ok := args.(string)
		if !ok || s == "" {
			return nil, fmt.Errorf("want a name, got %s", describe(args))
		}
		return Ref{Name: s}, nil
	case "GetAtt":
		return parseGetAtt(args)
	case "Sub":
		return parseSub(args)
	}
	return Fn{Name: name, Args: args}, nil
}

func parseGetAtt(args any) (GetAtt, error) {
	var res, attr string
	switch a := args.(type) {
	case string:
		res, attr, _ = strings.Cut(a, ".")
	case []any:
		if len(a) != 2 {
			return GetAtt{}, fmt.Errorf("want [Resource, Attribute], got %d items", len(a))
		}
		r, ok1 := a[0].(string)
		at, ok2 := a[1].(string)
		if !ok1 || !ok2 {
			return GetAtt{}, fmt.Errorf("want [Resource, Attribute] as strings")
		}
		res, attr = r, at
	default:
		return GetAtt{}, fmt.Errorf("want Resource.Attribute, got %s", describe(args))
	}
	if res == "" || attr == "" {
		return GetAtt{}, fmt.Errorf("want Resource.Attribute, got %s", describe(args))
	}
	return GetAtt{Resource: res, Attribute: attr}, nil
}

func parseSub(args any) (Sub, error) {
	switch a := args.(type) {
	case string:
		return Sub{Format: a}, nil
	case []any:
		if len(a) != 2 {
			return Sub{}, fmt.Errorf("want [Format, {Vars}], got %d items", len(a))
		}
		f, ok := a[0].(string)
		if !ok {
			return Sub{}, fmt.Errorf("format is %s, want a string", describe(a[0]))
		}
		vars, ok := a[1].(map[string]any)
		if !ok {
			return Sub{}, fmt.Errorf("variables are %s, want a mapping", describe(a[1]))
		}
		return Sub{Format: f, Vars: vars}, nil
	}
	return Sub{}, fmt.Errorf("want a format string, got %s", describe(args))
}
