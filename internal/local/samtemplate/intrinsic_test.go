package samtemplate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// value parses one YAML value the way Parse parses template values.
func value(t *testing.T, src string) (any, error) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatalf("yaml %q: %v", src, err)
	}
	return convert(&n)
}

func TestConvert(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want any
	}{
		{"string", `hello`, "hello"},
		{"int", `30`, 30},
		{"float", `1.5`, 1.5},
		{"bool", `true`, true},
		{"null", `~`, nil},
		{"quoted number stays a string", `"262144"`, "262144"},
		{"date stays a string", `2010-09-09`, "2010-09-09"},
		{"yes stays a string", `yes`, "yes"},
		{"list", `[a, 1]`, []any{"a", 1}},
		{"mapping", `{a: 1, b: [x]}`, map[string]any{"a": 1, "b": []any{"x"}}},
		{"alias", "a: &x [1]\nb: *x", map[string]any{"a": []any{1}, "b": []any{1}}},

		{"Ref short", `!Ref InboxTable`, Ref{Name: "InboxTable"}},
		{"Ref long", `{Ref: AWS::Region}`, Ref{Name: "AWS::Region"}},
		{"GetAtt dotted", `!GetAtt InboxTable.Arn`, GetAtt{Resource: "InboxTable", Attribute: "Arn"}},
		{"GetAtt list", `!GetAtt [EventsQueue, QueueName]`, GetAtt{Resource: "EventsQueue", Attribute: "QueueName"}},
		{"GetAtt nested attribute", `!GetAtt Db.Endpoint.Address`, GetAtt{Resource: "Db", Attribute: "Endpoint.Address"}},
		{"GetAtt long", `{"Fn::GetAtt": [A, Arn]}`, GetAtt{Resource: "A", Attribute: "Arn"}},
		{"Sub short", `!Sub "${AWS::StackName}-inbox"`, Sub{Format: "${AWS::StackName}-inbox"}},
		{"Sub with vars", "!Sub\n  - ${a}-${b}\n  - {a: !Ref X, b: lit}",
			Sub{Format: "${a}-${b}", Vars: map[string]any{"a": Ref{Name: "X"}, "b": "lit"}}},
		{"Sub long", `{"Fn::Sub": "x"}`, Sub{Format: "x"}},
		{"If", `!If [C, !Ref A, !Ref AWS::NoValue]`,
			Fn{Name: "If", Args: []any{"C", Ref{Name: "A"}, Ref{Name: "AWS::NoValue"}}}},
		{"Not Equals", `!Not [!Equals [!Ref P, ""]]`,
			Fn{Name: "Not", Args: []any{Fn{Name: "Equals", Args: []any{Ref{Name: "P"}, ""}}}}},
		{"IAM Condition stays a mapping", `{Condition: {Bool: {"aws:SecureTransport": "false"}}}`,
			map[string]any{"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}}}},
		{"Ref key among others stays a mapping", `{Ref: A, Other: B}`, map[string]any{"Ref": "A", "Other": "B"}},
		{"intrinsic inside a list", `[!Ref A, b]`, []any{Ref{Name: "A"}, "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := value(t, tt.src)
			if err != nil {
				t.Fatalf("convert(%q): %v", tt.src, err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("convert(%q) mismatch (-got +want):\n%s", tt.src, diff)
			}
		})
	}
}

func TestConvertErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown tag", `!Reff A`, "tag !Reff is not supported"},
		{"unknown long function", `{"Fn::Bogus": 1}`, "function Fn::Bogus is not supported"},
		{"intrinsic the template does not use", `!Join [",", [a, b]]`, "tag !Join is not supported"},
		{"long form the template does not use", `{"Fn::FindInMap": [M, a, b]}`, "function Fn::FindInMap is not supported"},
		{"duplicate key", "a: 1\na: 2", `duplicate key "a"`},
		{"Ref of a list", `!Ref [A]`, "want a name"},
		{"empty Ref", `{Ref: ""}`, "want a name"},
		{"GetAtt without attribute", `!GetAtt Table`, "want Resource.Attribute"},
		{"GetAtt of three", `!GetAtt [A, B, C]`, "want [Resource, Attribute]"},
		{"Sub of three", `!Sub [a, {}, c]`, "want [Format, {Vars}]"},
		{"Sub vars not a mapping", `!Sub [a, [b]]`, "variables are a list"},
		{"error has a line", "a: 1\nb: !GetAtt X", "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := value(t, tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("convert(%q) error = %v, want one containing %q", tt.src, err, tt.want)
			}
		})
	}
}
