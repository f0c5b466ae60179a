package samtemplate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const resolveTemplate = `
Parameters:
  Secret: {Type: String, Default: ""}
  Limit: {Type: Number, Default: 262144}
  Subnets: {Type: CommaDelimitedList, Default: "a, b"}
  Required: {Type: String}
Mappings:
  Sizes:
    us-east-1: {Memory: 512}
Conditions:
  HasSecret: !Not [!Equals [!Ref Secret, ""]]
  InEast: !Equals [!Ref AWS::Region, us-east-1]
  Both: !And [!Condition HasSecret, {Condition: InEast}]
  Either: !Or [!Condition HasSecret, !Condition InEast]
  Loop: !Not [!Condition Loop]
  NotBool: !Ref Secret
Resources:
  Table: {Type: AWS::DynamoDB::Table}
  Queue: {Type: AWS::SQS::Queue}
`

// fakeLookup names resources predictably: Ref is "<id>-physical", GetAtt is
// "<id>.<attr>".
func fakeLookup(id, attr string) (string, error) {
	if id == "Broken" {
		return "", fmt.Errorf("no such thing")
	}
	if attr == "" {
		return id + "-physical", nil
	}
	return id + "." + attr, nil
}

func TestResolve(t *testing.T) {
	tpl, err := Parse([]byte(resolveTemplate))
	if err != nil {
		t.Fatal(err)
	}
	ctx := Context{Lookup: fakeLookup}
	withSecret := Context{Lookup: fakeLookup, Params: map[string]string{"Secret": "arn:s"}}
	tests := []struct {
		name string
		ctx  Context
		src  string
		want any
	}{
		{"scalar unchanged", ctx, `30`, 30},
		{"pseudo parameters default", ctx,
			`!Sub "${AWS::StackName} ${AWS::Region} ${AWS::AccountId} ${AWS::Partition} ${AWS::URLSuffix}"`,
			"hookinbox us-east-1 123456789012 aws amazonaws.com"},
		{"pseudo parameters set", Context{StackName: "s", Region: "eu-west-1", AccountID: "1", Partition: "aws-cn", URLSuffix: "amazonaws.com.cn"},
			`!Sub "${AWS::StackName} ${AWS::Region} ${AWS::AccountId} ${AWS::Partition} ${AWS::URLSuffix}"`,
			"s eu-west-1 1 aws-cn amazonaws.com.cn"},
		{"StackId", ctx, `!Ref AWS::StackId`,
			"arn:aws:cloudformation:us-east-1:123456789012:stack/hookinbox/00000000-0000-0000-0000-000000000000"},
		{"parameter default", ctx, `!Ref Secret`, ""},
		{"parameter override", withSecret, `!Ref Secret`, "arn:s"},
		{"number parameter is a string", ctx, `!Ref Limit`, "262144"},
		{"list parameter", ctx, `!Ref Subnets`, []any{"a", "b"}},
		{"resource Ref", ctx, `!Ref Table`, "Table-physical"},
		{"resource GetAtt", ctx, `!GetAtt Queue.Arn`, "Queue.Arn"},
		{"Sub resource and attribute", ctx, `!Sub "${Table}|${Queue.Arn}"`, "Table-physical|Queue.Arn"},
		{"Sub literal", ctx, `!Sub "${!Literal}-${AWS::Region}"`, "${Literal}-us-east-1"},
		{"Sub vars win", ctx, `!Sub ["${Table}-${n}", {Table: mine, n: 5}]`, "mine-5"},
		{"Sub var is an intrinsic", ctx, `!Sub ["${q}", {q: !GetAtt Queue.Arn}]`, "Queue.Arn"},
		{"Sub number parameter", ctx, `!Sub "max=${Limit}"`, "max=262144"},
		{"If true", withSecret, `!If [HasSecret, yes, no]`, "yes"},
		{"If false", ctx, `!If [HasSecret, yes, no]`, "no"},
		{"If picks only its branch", ctx, `!If [HasSecret, !Ref Missing, ok]`, "ok"},
		{"NoValue drops a list element", ctx, `[a, !If [HasSecret, b, !Ref AWS::NoValue], c]`, []any{"a", "c"}},
		{"NoValue drops a key", ctx, `{a: 1, b: !If [HasSecret, 2, !Ref AWS::NoValue]}`, map[string]any{"a": 1}},
		{"NoValue at the top", ctx, `!Ref AWS::NoValue`, nil},
		{"And", withSecret, `!If [Both, y, n]`, "y"},
		{"And false", ctx, `!If [Both, y, n]`, "n"},
		{"Or", ctx, `!If [Either, y, n]`, "y"},
		{"Equals numbers and strings", ctx, `!Equals [!Ref Limit, 262144]`, true},
		{"Join with numbers", ctx, `!Join ["-", [a, 1, !Ref Table]]`, "a-1-Table-physical"},
		{"Join a list parameter", ctx, `!Join [";", !Ref Subnets]`, "a;b"},
		{"Select Split", ctx, `!Select [1, !Split [":", "x:y:z"]]`, "y"},
		{"Select string index", ctx, `!Select ["0", [p, q]]`, "p"},
		{"Base64", ctx, `!Base64 hi`, "aGk="},
		{"FindInMap", ctx, `!FindInMap [Sizes, !Ref AWS::Region, Memory]`, 512},
		{"Length", ctx, `!Length [a, b, c]`, 3},
		{"ToJsonString", ctx, `!ToJsonString {a: !Ref Table}`, `{"a":"Table-physical"}`},
		{"nested maps and lists", ctx, `{env: {T: !Ref Table}, l: [!GetAtt Table.Arn]}`,
			map[string]any{"env": map[string]any{"T": "Table-physical"}, "l": []any{"Table.Arn"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := value(t, tt.src)
			if err != nil {
				t.Fatalf("parse %q: %v", tt.src, err)
			}
			got, err := tpl.Resolve(v, tt.ctx)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.src, err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Resolve(%q) mismatch (-got +want):\n%s", tt.src, diff)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tpl, err := Parse([]byte(resolveTemplate))
	if err != nil {
		t.Fatal(err)
	}
	ctx := Context{Lookup: fakeLookup}
	tests := []struct {
		name string
		ctx  Context
		src  string
		want string
	}{
		{"unknown name", ctx, `!Ref Tabel`, "!Ref Tabel: no parameter or resource"},
		{"unknown GetAtt resource", ctx, `!GetAtt Nope.Arn`, "no resource Nope"},
		{"no Lookup", Context{}, `!Ref Table`, "needs Context.Lookup"},
		{"Lookup fails", Context{Lookup: func(string, string) (string, error) { return "", fmt.Errorf("boom") }},
			`!GetAtt Table.Arn`, "lookup: boom"},
		{"parameter without default", ctx, `!Ref Required`, "no Default"},
		{"unknown condition", ctx, `!If [Nope, a, b]`, "no condition Nope"},
		{"condition cycle", ctx, `!If [Loop, a, b]`, "refers to itself"},
		{"condition not a bool", ctx, `!If [NotBool, a, b]`, "want true or false"},
		{"Sub unknown name", ctx, `!Sub "${Nope}"`, "!Sub ${Nope}: no parameter or resource"},
		{"Sub unclosed", ctx, `!Sub "${Table"`, "unclosed"},
		{"Sub list parameter", ctx, `!Sub "${Subnets}"`, "not a string"},
		{"If arity", ctx, `!If [HasSecret, a]`, "want a list of 3 arguments"},
		{"Select out of range", ctx, `!Select [2, [a, b]]`, "out of range"},
		{"Join not a list", ctx, `!Join [",", abc]`, "want a list"},
		{"Join of a mapping", ctx, `!Join [",", [{a: 1}]]`, "element 0"},
		{"FindInMap missing", ctx, `!FindInMap [Sizes, eu-west-1, Memory]`, "no mapping entry Sizes.eu-west-1.Memory"},
		{"unsupported", ctx, `!GetAZs ""`, "Fn::GetAZs: cannot be evaluated"},
		{"error names its path", ctx, `{a: {b: [x, !Ref Nope]}}`, "a.b[1]: !Ref Nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := value(t, tt.src)
			if err != nil {
				t.Fatalf("parse %q: %v", tt.src, err)
			}
			_, err = tpl.Resolve(v, tt.ctx)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Resolve(%q) error = %v, want one containing %q", tt.src, err, tt.want)
			}
		})
	}
}

func TestResolveString(t *testing.T) {
	tpl, err := Parse([]byte(resolveTemplate))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		v       any
		want    string
		wantErr bool
	}{
		{"string", "x", "x", false},
		{"int", 10, "10", false},
		{"float", 2.5, "2.5", false},
		{"bool", true, "true", false},
		{"Ref", Ref{Name: "Table"}, "Table-physical", false},
		{"list", []any{"a"}, "", true},
		{"NoValue", Ref{Name: "AWS::NoValue"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tpl.ResolveString(tt.v, Context{Lookup: fakeLookup})
			if (err != nil) != tt.wantErr {
				t.Fatalf("ResolveString(%v) error = %v, want error %v", tt.v, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ResolveString(%v) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
}

func TestResolveDoesNotModifyTemplate(t *testing.T) {
	tpl, err := Parse([]byte("Resources:\n  T: {Type: X, Properties: {A: [!Ref AWS::NoValue, x]}}"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.Resolve(tpl.Resources["T"].Properties, Context{}); err != nil {
		t.Fatal(err)
	}
	got := tpl.Resources["T"].Properties["A"]
	want := []any{Ref{Name: "AWS::NoValue"}, "x"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Resolve changed the template (-got +want):\n%s", diff)
	}
}
