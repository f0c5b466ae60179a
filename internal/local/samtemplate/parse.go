// Package samtemplate loads the project's AWS SAM template and resolves its
// intrinsic functions for one deployment, so the local stack, the CLI and
// the template's tests (internal/local/deploytest) read names, environment
// and wiring from template.yaml instead of repeating them.
//
// It knows what template.yaml uses and nothing more: the sections, SAM's
// Globals merge for functions, and the intrinsics Ref, GetAtt, Sub, If,
// Equals and Not, evaluated in a Context that names the stack, region,
// account, parameter values and the physical names of resources. Any other
// tag or Fn:: key is a parse error, so a template that starts using one
// fails its tests until this package learns it.
//
// Why not github.com/awslabs/goformation/v7 (tried at v7.14.9 on
// template.yaml): it unmarshals into typed structs after resolving
// intrinsics against parameter defaults only, so the same !Ref to a Number
// parameter cannot be both an environment string (MAX_BODY_BYTES) and a
// number (an alarm's Threshold) and the template fails to load; with
// intrinsics left unprocessed it cannot load either. It has no GetAtt (always
// nil), no resource Refs, fixed pseudo parameters (one stack name, one
// region) and no parameter values, and it parses Globals without merging
// them into functions: every check here that resolves the template in two
// deployments would need this package's resolver anyway.
//
// A parsed Template is not modified by any method and is safe for
// concurrent use.
package samtemplate

import (
	"fmt"
	"os"
	"sort"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Template is a parsed SAM or CloudFormation template. Values in the maps are
// map[string]any, []any, string, int, float64, bool, nil or one of the
// intrinsic types Ref, GetAtt, Sub and Fn.
type Template struct {
	Description string
	Transform   any
	Parameters  map[string]Parameter
	Rules       map[string]any
	Conditions  map[string]any
	Globals     map[string]any
	Resources   map[string]Resource
	Outputs     map[string]any
}

// Parameter is one entry of the Parameters section. Default holds the default
// value as a string (numbers formatted); HasDefault tells an empty default
// from none.
type Parameter struct {
	Type        string
	Default     string
	HasDefault  bool
	Description string
	// AllowedValues, MinValue and MaxValue constrain the value; empty
	// when the template sets none.
	AllowedValues      []string
	MinValue, MaxValue string
}

// Resource is one entry of the Resources section.
type Resource struct {
	Type       string
	Properties map[string]any
	Metadata   map[string]any
	Condition  string
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load template: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load template %s: %w", path, err)
	}
	return t, nil
}

// Parse parses a YAML template, turning intrinsic tags and long forms into
// Ref, GetAtt, Sub and Fn values.
func Parse(data []byte) (*Template, error) {
	root, err := parseRoot(data)
	if err != nil {
		return nil, err
	}
	t := &Template{Transform: root["Transform"]}
	if d, ok := root["Description"].(string); ok {
		t.Description = d
	}
	sections := []struct {
		name string
		dst  *map[string]any
	}{
		{"Rules", &t.Rules},
		{"Conditions", &t.Conditions},
		{"Globals", &t.Globals},
		{"Outputs", &t.Outputs},
	}
	for _, s := range sections {
		m, err := section(root, s.name)
		if err != nil {
			return nil, err
		}
		*s.dst = m
	}
	if t.Parameters, err = parameters(root); err != nil {
		return nil, err
	}
	if t.Resources, err = resources(root); err != nil {
		return nil, err
	}
	return t, nil
}

// parseRoot parses data into the template's top-level mapping.
func parseRoot(data []byte) (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("parse template: empty document")
	}
	v, err := convert(doc.Content[0])
	if err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parse template: top level is %s, want a mapping", describe(v))
	}
	return root, nil
}

// parameters returns the Parameters section of root.
func parameters(root map[string]any) (map[string]Parameter, error) {
	params, err := section(root, "Parameters")
	if err != nil {
		return nil, err
	}
	out := make(map[string]Parameter, len(params))
	for name, raw := range params {
		p, err := parseParameter(raw)
		if err != nil {
			return nil, fmt.Errorf("parse template: parameter %s: %w", name, err)
		}
		out[name] = p
	}
	return out, nil
}

// resources returns the Resources section of root.
func resources(root map[string]any) (map[string]Resource, error) {
	res, err := section(root, "Resources")
	if err != nil {
		return nil, err
	}
	out := make(map[string]Resource, len(res))
	for id, raw := range res {
		r, err := parseResource(raw)
		if err != nil {
			return nil, fmt.Errorf("parse template: resource %s: %w", id, err)
		}
		out[id] = r
	}
	return out, nil
}

// ByType returns the logical IDs of the resources of type typ, sorted.
func (t *Template) ByType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// section returns root[name] as a mapping; a missing or empty section is an
// empty map.
func section(root map[string]any, name string) (map[string]any, error) {
	v, ok := root[name]
	if !ok || v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parse template: %s is %s, want a mapping", name, describe(v))
	}
	return m, nil
}

func parseParameter(raw any) (Parameter, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return Parameter{}, fmt.Errorf("is %s, want a mapping", describe(raw))
	}
	var p Parameter
	p.Type, _ = m["Type"].(string)
	if p.Type == "" {
		return Parameter{}, fmt.Errorf("no Type")
	}
	p.Description, _ = m["Description"].(string)
	if d, ok := m["Default"]; ok {
		s, err := ScalarString(d)
		if err != nil {
			return Parameter{}, fmt.Errorf("property Default: %w", err)
		}
		p.Default, p.HasDefault = s, true
	}
	for _, bound := range []struct {
		key string
		to  *string
	}{{"MinValue", &p.MinValue}, {"MaxValue", &p.MaxValue}} {
		if v, ok := m[bound.key]; ok {
			s, err := ScalarString(v)
			if err != nil {
				return Parameter{}, fmt.Errorf("property %s: %w", bound.key, err)
			}
			*bound.to = s
		}
	}
	if v, ok := m["AllowedValues"]; ok {
		list, ok := v.([]any)
		if !ok {
			return Parameter{}, fmt.Errorf("property AllowedValues is %s, want a list", describe(v))
		}
		for _, e := range list {
			s, err := ScalarString(e)
			if err != nil {
				return Parameter{}, fmt.Errorf("property AllowedValues: %w", err)
			}
			p.AllowedValues = append(p.AllowedValues, s)
		}
	}
	return p, nil
}

func parseResource(raw any) (Resource, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return Resource{}, fmt.Errorf("is %s, want a mapping", describe(raw))
	}
	var r Resource
	r.Type, _ = m["Type"].(string)
	if r.Type == "" {
		return Resource{}, fmt.Errorf("no Type")
	}
	for _, f := range []struct {
		name string
		dst  *map[string]any
	}{{"Properties", &r.Properties}, {"Metadata", &r.Metadata}} {
		switch v := m[f.name].(type) {
		case nil:
			*f.dst = map[string]any{}
		case map[string]any:
			*f.dst = v
		default:
			return Resource{}, fmt.Errorf("%s is %s, want a mapping", f.name, describe(v))
		}
	}
	if c, ok := m["Condition"]; ok {
		s, ok := c.(string)
		if !ok {
			return Resource{}, fmt.Errorf("property Condition is %s, want a string", describe(c))
		}
		r.Condition = s
	}
	return r, nil
}

// ScalarString formats a string, number or boolean as CloudFormation passes
// it on: numbers in their shortest form, booleans as "true"/"false".
func ScalarString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", fmt.Errorf("%s is not a string or number", describe(v))
}

// describe names the kind of a parsed value for error messages.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return strconv.Quote(v)
	case Ref:
		return "!Ref " + v.Name
	case GetAtt:
		return "!GetAtt " + v.Resource + "." + v.Attribute
	case Sub:
		return "!Sub " + strconv.Quote(v.Format)
	case Fn:
		return "Fn::" + v.Name
	}
	return fmt.Sprintf("%T %v", v, v)
}
