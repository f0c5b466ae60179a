package samtemplate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
	tpl := parseSmall(t)
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
		{"parameter default", ctx, `!Ref Secret`, ""},
		{"parameter override", withSecret, `!Ref Secret`, "arn:s"},
		{"number parameter is a string", ctx, `!Ref Limit`, "262144"},
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
		{"Equals numbers and strings", ctx, `!Equals [!Ref Limit, 262144]`, true},
		{"Not Equals", withSecret, `!Not [!Equals [!Ref Secret, ""]]`, true},
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

// TestResolveCondition checks the Fn{Name: "Condition"} form the local stack
// uses to decide whether a resource with a Condition exists.
func TestResolveCondition(t *testing.T) {
	tpl := parseSmall(t)
	for _, tt := range []struct {
		secret string
		want   any
	}{{"", false}, {"arn:s", true}} {
		got, err := tpl.Resolve(Fn{Name: "Condition", Args: "HasSecret"}, Context{Params: map[string]string{"Secret": tt.secret}})
		if err != nil || got != tt.want {
			t.Errorf("HasSecret with Secret=%q = %v, %v; want %v", tt.secret, got, err, tt.want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tpl := parseSmall(t)
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
		{"If arity", ctx, `!If [HasSecret, a]`, "want a list of 3 arguments"},
		{"Equals of a list", ctx, `!Equals [[a], a]`, "argument 0"},
		{"Not of a string", ctx, `!Not [a]`, "want a condition"},
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
	tpl := parseSmall(t)
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
