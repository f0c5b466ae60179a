package samtemplate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// small is the template the package's tests parse: every section, and
// conditions and resources for Resolve to use (Loop and NotBool are broken
// on purpose).
const small = `
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Description: small
Parameters:
  Secret: {Type: String, Default: ""}
  Limit: {Type: Number, Default: 262144}
  Required: {Type: String}
Conditions:
  HasSecret: !Not [!Equals [!Ref Secret, ""]]
  InEast: !Equals [!Ref AWS::Region, us-east-1]
  Loop: !If [Loop, true, false]
  NotBool: !Ref Secret
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Condition: HasSecret
    Properties:
      TableName: !Sub "${AWS::StackName}-t"
  Queue: {Type: AWS::SQS::Queue}
  Fn:
    Type: AWS::Serverless::Function
    Metadata: {BuildMethod: makefile}
    Properties: {Handler: bootstrap}
  Api:
    Type: AWS::Serverless::HttpApi
Outputs:
  Name: {Value: !Ref Table}
`

func parseSmall(t *testing.T) *Template {
	t.Helper()
	tpl, err := Parse([]byte(small))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tpl
}

func TestParse(t *testing.T) {
	tpl := parseSmall(t)
	wantParams := map[string]Parameter{
		"Secret":   {Type: "String", Default: "", HasDefault: true},
		"Limit":    {Type: "Number", Default: "262144", HasDefault: true},
		"Required": {Type: "String"},
	}
	if diff := cmp.Diff(tpl.Parameters, wantParams); diff != "" {
		t.Errorf("Parameters mismatch (-got +want):\n%s", diff)
	}
	wantResources := map[string]Resource{
		"Table": {
			Type:       "AWS::DynamoDB::Table",
			Condition:  "HasSecret",
			Properties: map[string]any{"TableName": Sub{Format: "${AWS::StackName}-t"}},
			Metadata:   map[string]any{},
		},
		"Fn": {
			Type:       "AWS::Serverless::Function",
			Properties: map[string]any{"Handler": "bootstrap"},
			Metadata:   map[string]any{"BuildMethod": "makefile"},
		},
		"Queue": {Type: "AWS::SQS::Queue", Properties: map[string]any{}, Metadata: map[string]any{}},
		"Api":   {Type: "AWS::Serverless::HttpApi", Properties: map[string]any{}, Metadata: map[string]any{}},
	}
	if diff := cmp.Diff(tpl.Resources, wantResources); diff != "" {
		t.Errorf("Resources mismatch (-got +want):\n%s", diff)
	}
	if got, want := tpl.Transform, any("AWS::Serverless-2016-10-31"); got != want {
		t.Errorf("Transform = %v, want %v", got, want)
	}
	if got, want := tpl.Description, "small"; got != want {
		t.Errorf("Description = %q, want %q", got, want)
	}
	if diff := cmp.Diff(tpl.Outputs, map[string]any{"Name": map[string]any{"Value": Ref{Name: "Table"}}}); diff != "" {
		t.Errorf("Outputs mismatch (-got +want):\n%s", diff)
	}
	if tpl.Globals == nil {
		t.Errorf("a missing section should be an empty map, got Globals=%v", tpl.Globals)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty", ``, "empty document"},
		{"top level list", `[a]`, "top level is a list"},
		{"section not a mapping", `Resources: [a]`, "Resources is a list"},
		{"resource without Type", "Resources:\n  A: {Properties: {}}", "resource A: no Type"},
		{"parameter without Type", "Parameters:\n  P: {Default: x}", "parameter P: no Type"},
		{"Properties not a mapping", "Resources:\n  A: {Type: X, Properties: [1]}", "Properties is a list"},
		{"bad YAML", "a: [", "parse template"},
		{"bad intrinsic", "Resources:\n  A: {Type: X, Properties: {B: !Nope x}}", "tag !Nope is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", tt.src, err, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(small), 0o600); err != nil {
		t.Fatal(err)
	}
	tpl, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got, want := len(tpl.Resources), 4; got != want {
		t.Errorf("Load: %d resources, want %d", got, want)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Errorf("Load(missing) succeeded, want an error")
	}
}

func TestByType(t *testing.T) {
	tpl, err := Parse([]byte(`
Resources:
  B: {Type: AWS::Serverless::Function}
  A: {Type: AWS::Serverless::Function}
  Q: {Type: AWS::SQS::Queue}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		typ  string
		want []string
	}{
		{"AWS::Serverless::Function", []string{"A", "B"}},
		{"AWS::SQS::Queue", []string{"Q"}},
		{"AWS::DynamoDB::Table", nil},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			if diff := cmp.Diff(tpl.ByType(tt.typ), tt.want); diff != "" {
				t.Errorf("ByType(%s) mismatch (-got +want):\n%s", tt.typ, diff)
			}
		})
	}
}
