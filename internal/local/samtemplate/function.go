package samtemplate

import (
	"fmt"
	"sort"
)

// FunctionType is the resource type of a SAM function.
const FunctionType = "AWS::Serverless::Function"

// Function returns the properties of the AWS::Serverless::Function
// logicalID merged over Globals.Function the way SAM merges them: the
// resource's scalars win, mappings merge key by key, lists are concatenated
// (globals first), and an intrinsic counts as a scalar; a type mismatch
// takes the resource's value. Maps and lists in the result are copies;
// intrinsics in it are unresolved.
func (t *Template) Function(logicalID string) (map[string]any, error) {
	r, ok := t.Resources[logicalID]
	if !ok {
		return nil, fmt.Errorf("function %s: no such resource", logicalID)
	}
	if r.Type != FunctionType {
		return nil, fmt.Errorf("function %s: type is %s, want %s", logicalID, r.Type, FunctionType)
	}
	global, _ := t.Globals["Function"].(map[string]any)
	merged, _ := mergeGlobal(global, r.Properties).(map[string]any)
	if merged == nil {
		merged = map[string]any{}
	}
	return merged, nil
}

// FunctionEnv returns the function's Environment.Variables, merged over
// Globals.Function.Environment.Variables and resolved to strings in c.
func (t *Template) FunctionEnv(logicalID string, c Context) (map[string]string, error) {
	props, err := t.Function(logicalID)
	if err != nil {
		return nil, err
	}
	env, _ := props["Environment"].(map[string]any)
	vars, ok := env["Variables"].(map[string]any)
	if !ok && env["Variables"] != nil {
		return nil, fmt.Errorf("function %s: Environment.Variables is %s, want a mapping", logicalID, describe(env["Variables"]))
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names) // deterministic first error
	out := make(map[string]string, len(vars))
	for _, k := range names {
		if vars[k] == nil {
			return nil, fmt.Errorf("function %s: env %s: no value (write \"\" for an empty one)", logicalID, k)
		}
		v, err := t.Resolve(vars[k], c)
		if err != nil {
			return nil, fmt.Errorf("function %s: env %s: %w", logicalID, k, err)
		}
		if v == nil { // !Ref AWS::NoValue drops the variable
			continue
		}
		s, err := ScalarString(v)
		if err != nil {
			return nil, fmt.Errorf("function %s: env %s: %w", logicalID, k, err)
		}
		out[k] = s
	}
	return out, nil
}

// mergeGlobal merges a local value over a global one by SAM's rules.
func mergeGlobal(global, local any) any {
	switch g := global.(type) {
	case map[string]any:
		l, ok := local.(map[string]any)
		if !ok {
			return copyValue(local)
		}
		out := make(map[string]any, len(g)+len(l))
		for k, v := range g {
			out[k] = copyValue(v)
		}
		for k, v := range l {
			if gv, ok := g[k]; ok {
				out[k] = mergeGlobal(gv, v)
			} else {
				out[k] = copyValue(v)
			}
		}
		return out
	case []any:
		l, ok := local.([]any)
		if !ok {
			return copyValue(local)
		}
		out := make([]any, 0, len(g)+len(l))
		for _, v := range g {
			out = append(out, copyValue(v))
		}
		for _, v := range l {
			out = append(out, copyValue(v))
		}
		return out
	}
	return copyValue(local)
}

// copyValue copies maps and lists so that changing a merged result does not
// change the template.
func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
