package deploytest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/iamcheck"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// The permissions the template deploys. They are read from the template the
// SAM transform makes of template.yaml, not from the functions' Policies:
// SAM adds to the roles it generates (an AWS-managed policy for an SQS
// event, the statements of its policy templates), and what a function may
// do is what its role says after that.

const exampleTemplate = "../../../examples/custom-business/template.yaml"

var translations = struct {
	sync.Mutex
	byPath map[string]*samtemplate.Template
}{byPath: map[string]*samtemplate.Template{}}

// translated returns the CloudFormation template the SAM transform makes of
// the template at path (samtemplate.Translate), once per path.
func translated(t *testing.T, path string) *samtemplate.Template {
	t.Helper()
	translations.Lock()
	defer translations.Unlock()
	if tpl, ok := translations.byPath[path]; ok {
		return tpl
	}
	tpl, err := samtemplate.Translate(path)
	if err != nil {
		t.Fatal(err)
	}
	translations.byPath[path] = tpl
	return tpl
}

// roleOf returns the logical ID of the role function runs with in the
// translated template tpl.
func roleOf(tpl *samtemplate.Template, function string) (string, error) {
	fn := tpl.Resources[function]
	if fn.Type != "AWS::Lambda::Function" {
		return "", fmt.Errorf("%s is a %q, want an AWS::Lambda::Function", function, fn.Type)
	}
	role, ok := fn.Properties["Role"].(samtemplate.GetAtt)
	if !ok || role.Attribute != "Arn" || tpl.Resources[role.Resource].Type != "AWS::IAM::Role" {
		return "", fmt.Errorf("%s's Role is %v, want !GetAtt <a role of this template>.Arn, whose policies can be checked", function, fn.Properties["Role"])
	}
	return role.Resource, nil
}

// rolePermissions returns the inline policy documents and the managed
// policy ARNs of role, resolved in c.
func rolePermissions(tpl *samtemplate.Template, c samtemplate.Context, role string) (docs []any, managed []string, err error) {
	v, err := tpl.Resolve(tpl.Resources[role].Properties, c)
	if err != nil {
		return nil, nil, err
	}
	props, _ := v.(map[string]any)
	policies, _ := props["Policies"].([]any)
	for i, p := range policies {
		m, _ := p.(map[string]any)
		doc, ok := m["PolicyDocument"]
		if !ok {
			return nil, nil, fmt.Errorf("Policies[%d] has no PolicyDocument", i)
		}
		docs = append(docs, doc)
	}
	if arns, ok := props["ManagedPolicyArns"].([]any); ok && len(arns) > 0 {
		if managed, err = iamcheck.StringList(arns); err != nil {
			return nil, nil, fmt.Errorf("ManagedPolicyArns: %w", err)
		}
	}
	return docs, managed, nil
}

// allowedManagedPolicies are the only AWS-managed policies a role may
// attach: CloudWatch Logs for the function's own log lines, and X-Ray for
// its traces. Every other one grants its actions on every resource.
var allowedManagedPolicies = map[string]bool{
	"service-role/AWSLambdaBasicExecutionRole": true,
	"AWSXrayWriteOnlyAccess":                   true,
	"AWSXRayDaemonWriteAccess":                 true,
}

var awsManagedPolicyARN = regexp.MustCompile(`^arn:[a-z-]+:iam::aws:policy/(.+)$`)

// privilegeProblems returns every way the translated template tpl,
// deployed in c, grants more than named actions on named resources: a
// function whose role is not one of the template's, a role statement with
// a wildcard action or resource (sqs:* on "*", say), a managed policy
// other than logging and tracing, or a policy resource outside the roles.
func privilegeProblems(tpl *samtemplate.Template, c samtemplate.Context) []string {
	var problems []string
	for _, fn := range tpl.ByType("AWS::Lambda::Function") {
		if _, err := roleOf(tpl, fn); err != nil {
			problems = append(problems, err.Error())
		}
	}
	for _, typ := range []string{"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy"} {
		for _, id := range tpl.ByType(typ) {
			problems = append(problems, fmt.Sprintf("%s is an %s: put its statements in the role's Policies, where they are checked", id, typ))
		}
	}
	for _, role := range tpl.ByType("AWS::IAM::Role") {
		docs, managed, err := rolePermissions(tpl, c, role)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", role, err))
			continue
		}
		if _, err := grants(docs); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", role, err))
		}
		for _, arn := range managed {
			m := awsManagedPolicyARN.FindStringSubmatch(arn)
			if m == nil || !allowedManagedPolicies[m[1]] {
				problems = append(problems, fmt.Sprintf("%s attaches managed policy %s: only logging (AWSLambdaBasicExecutionRole) and tracing (X-Ray write) are allowed; grant the rest as statements on named resources", role, arn))
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// translatedDeployments are deployments plus one with every provider and
// secret enabled, so every conditional statement is resolved, and one
// with tracing and alarm-topic encryption off.
func translatedDeployments(t *testing.T, tpl *samtemplate.Template) map[string]samtemplate.Context {
	t.Helper()
	ctxs := deployments(t, tpl)
	every := map[string]string{"GoPayClientId": "8123456789"}
	for name, p := range tpl.Parameters {
		if strings.HasSuffix(name, "Arn") && p.Type == "String" {
			every[name] = "arn:aws:secretsmanager:us-east-1:123456789012:secret:" + name + "-AbCdEf"
		}
	}
	ctxs["every-secret"] = deployment(t, tpl, samtemplate.Context{Params: every})
	ctxs["untraced"] = deployment(t, tpl, samtemplate.Context{Params: map[string]string{"TracingEnabled": "false", "AlarmTopicEncryption": "none"}})
	return ctxs
}

func TestTemplateTranslatedLeastPrivilege(t *testing.T) {
	const inv = "as SAM deploys it, every role grants named actions on named resources, and attaches no AWS-managed policy beyond logging and tracing"
	for _, path := range []string{projectTemplate, exampleTemplate} {
		t.Run(strings.TrimPrefix(path, "../../../"), func(t *testing.T) {
			tpl := translated(t, path)
			for name, c := range translatedDeployments(t, tpl) {
				t.Run(name, func(t *testing.T) {
					for _, p := range privilegeProblems(tpl, c) {
						t.Errorf("%s invariant %q broken: %s", path, inv, p)
					}
				})
			}
		})
	}
}

// TestPrivilegeProblemsFindsWideGrants checks the check: on a translated
// template whose roles are too wide in each of the ways SAM and an author
// widen them, it names each.
func TestPrivilegeProblemsFindsWideGrants(t *testing.T) {
	tpl, err := samtemplate.Parse([]byte(`
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: q
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Role: !GetAtt FnRole.Arn
  FnRole:
    Type: AWS::IAM::Role
    Properties:
      ManagedPolicyArns:
        - arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole
        - arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: sqs:SendMessage
                Resource: !GetAtt Queue.Arn
  TableRole:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: dynamodb:GetItem
                Resource: "*"
  QueueRole:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: sqs:*
                Resource: !GetAtt Queue.Arn
  Elsewhere:
    Type: AWS::Lambda::Function
    Properties:
      Role: arn:aws:iam::123456789012:role/shared
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(privilegeProblems(tpl, deployment(t, tpl, samtemplate.Context{})), "\n")
	for _, want := range []string{
		"FnRole attaches managed policy arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole",
		`TableRole: policy 0 statement 0 grants dynamodb:GetItem on "*"`,
		`QueueRole: policy 0 statement 0 grants wildcard action "sqs:*"`,
		"Elsewhere's Role is arn:aws:iam::123456789012:role/shared",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "managed policy arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole") {
		t.Errorf("problems name the logging policy, which is allowed:\n%s", got)
	}
}
