package samtemplate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const functionTemplate = `
Parameters:
  Tolerance: {Type: String, Default: 300s}
  Secret: {Type: String, Default: ""}
Conditions:
  HasSecret: !Not [!Equals [!Ref Secret, ""]]
Globals:
  Function:
    Runtime: provided.al2023
    Architectures: [arm64]
    Timeout: 30
    Layers: [g]
    Environment:
      Variables:
        LOG_LEVEL: info
        SHARED: global
Resources:
  Table: {Type: AWS::DynamoDB::Table}
  Plain:
    Type: AWS::Serverless::Function
    Properties: {Handler: bootstrap}
  Receiver:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 10
      Layers: [l]
      Environment:
        Variables:
          SHARED: local
          TABLE: !Ref Table
          TOLERANCE: !Ref Tolerance
          MAX: 262144
          EMPTY: ""
          OPTIONAL: !If [HasSecret, !Ref Secret, !Ref AWS::NoValue]
  Nulls:
    Type: AWS::Serverless::Function
    Properties:
      Environment: {Variables: {UNSET: }}
  NotAFunction: {Type: AWS::SQS::Queue}
`

func TestFunction(t *testing.T) {
	tpl, err := Parse([]byte(functionTemplate))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Function("Receiver")
	if err != nil {
		t.Fatalf("Function: %v", err)
	}
	want := map[string]any{
		"Runtime":       "provided.al2023",
		"Architectures": []any{"arm64"},
		"Timeout":       10,
		"Layers":        []any{"g", "l"},
		"Environment": map[string]any{"Variables": map[string]any{
			"LOG_LEVEL": "info",
			"SHARED":    "local",
			"TABLE":     Ref{Name: "Table"},
			"TOLERANCE": Ref{Name: "Tolerance"},
			"MAX":       262144,
			"EMPTY":     "",
			"OPTIONAL": Fn{Name: "If", Args: []any{
				"HasSecret", Ref{Name: "Secret"}, Ref{Name: "AWS::NoValue"}}},
		}},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Function(Receiver) mismatch (-got +want):\n%s", diff)
	}

	got["Layers"].([]any)[0] = "changed"
	if g := tpl.Globals["Function"].(map[string]any)["Layers"].([]any)[0]; g != "g" {
		t.Errorf("changing the merged result changed Globals: Layers[0] = %v", g)
	}
}

func TestFunctionErrors(t *testing.T) {
	tpl, err := Parse([]byte(functionTemplate))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, id, want string
	}{
		{"missing", "Nope", "no such resource"},
		{"wrong type", "NotAFunction", "type is AWS::SQS::Queue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tpl.Function(tt.id)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Function(%s) error = %v, want one containing %q", tt.id, err, tt.want)
			}
		})
	}
}

func TestFunctionEnv(t *testing.T) {
	tpl, err := Parse([]byte(functionTemplate))
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{
		"LOG_LEVEL": "info",
		"SHARED":    "local",
		"TABLE":     "Table-physical",
		"TOLERANCE": "300s",
		"MAX":       "262144",
		"EMPTY":     "",
	}
	withSecret := map[string]string{"OPTIONAL": "arn:s", "TOLERANCE": "1m"}
	for k, v := range base {
		if _, ok := withSecret[k]; !ok {
			withSecret[k] = v
		}
	}
	tests := []struct {
		name string
		id   string
		ctx  Context
		want map[string]string
	}{
		{"defaults", "Receiver", Context{Lookup: fakeLookup}, base},
		{"parameters set", "Receiver", Context{Lookup: fakeLookup, Params: map[string]string{"Secret": "arn:s", "Tolerance": "1m"}}, withSecret},
		{"globals only", "Plain", Context{}, map[string]string{"LOG_LEVEL": "info", "SHARED": "global"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tpl.FunctionEnv(tt.id, tt.ctx)
			if err != nil {
				t.Fatalf("FunctionEnv(%s): %v", tt.id, err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("FunctionEnv(%s) mismatch (-got +want):\n%s", tt.id, diff)
			}
		})
	}
}

func TestFunctionEnvErrors(t *testing.T) {
	tpl, err := Parse([]byte(functionTemplate))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, id string
		ctx      Context
		want     string
	}{
		{"null value", "Nulls", Context{}, "env UNSET: no value"},
		{"unresolvable", "Receiver", Context{}, "env TABLE: !Ref Table: resource Table needs Context.Lookup"},
		{"not a function", "Table", Context{}, "type is AWS::DynamoDB::Table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tpl.FunctionEnv(tt.id, tt.ctx)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("FunctionEnv(%s) error = %v, want one containing %q", tt.id, err, tt.want)
			}
		})
	}
}
