package deploytest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// alarmTargetProblems returns why CloudWatch could not publish some alarm
// of tpl deployed in c, or could publish for other accounts too: an action
// that is not a topic of the template (its key cannot be checked), or a
// topic encrypted with a key that is not a customer-managed key of the
// template whose policy lets cloudwatch.amazonaws.com use it for this
// account's alarms only. The AWS-managed alias/aws/sns key is the usual
// culprit: its policy cannot be changed, so alarms are dropped.
func alarmTargetProblems(t *testing.T, tpl *samtemplate.Template, c samtemplate.Context) []string {
	t.Helper()
	var problems []string
	topics := map[string]string{} // physical ARN → logical ID
	for _, id := range tpl.ByType("AWS::SNS::Topic") {
		arn, err := c.Lookup(id, "")
		if err != nil {
			t.Fatal(err)
		}
		topics[arn] = id
	}
	keys := map[string]string{} // key ID or ARN → logical ID, for keys that exist in c
	for _, id := range tpl.ByType("AWS::KMS::Key") {
		if cond := tpl.Resources[id].Condition; cond != "" {
			on, err := tpl.Resolve(samtemplate.Fn{Name: "Condition", Args: cond}, c)
			if err != nil {
				t.Fatal(err)
			}
			if on != true {
				continue
			}
		}
		for _, attr := range []string{"", "Arn"} {
			v, err := c.Lookup(id, attr)
			if err != nil {
				t.Fatal(err)
			}
			keys[v] = id
		}
	}
	for alarm, p := range resolvedAlarms(t, tpl, c) {
		for _, list := range []string{"AlarmActions", "OKActions", "InsufficientDataActions"} {
			actions, _ := p[list].([]any)
			for _, a := range actions {
				arn := fmt.Sprint(a)
				topic, ok := topics[arn]
				if !ok {
					problems = append(problems, fmt.Sprintf("%s %s %s is not a topic of this template: its encryption cannot be checked", alarm, list, arn))
					continue
				}
				props, err := tpl.Resolve(tpl.Resources[topic].Properties, c)
				if err != nil {
					t.Fatal(err)
				}
				key, encrypted := props.(map[string]any)["KmsMasterKeyId"]
				if !encrypted {
					continue
				}
				k := fmt.Sprint(key)
				if strings.HasPrefix(k, "alias/aws/") || strings.Contains(k, ":alias/aws/") {
					problems = append(problems, fmt.Sprintf("%s notifies %s, encrypted with the AWS-managed key %s, which CloudWatch cannot use", alarm, topic, k))
					continue
				}
				keyID, ok := keys[k]
				if !ok {
					problems = append(problems, fmt.Sprintf("%s notifies %s, encrypted with %s, not a customer-managed key of this template", alarm, topic, k))
					continue
				}
				if p := cloudWatchKeyProblem(t, tpl, c, keyID); p != "" {
					problems = append(problems, fmt.Sprintf("%s notifies %s, encrypted with %s, %s", alarm, topic, keyID, p))
				}
			}
		}
	}
	return problems
}

// cloudWatchKeyProblem returns "" when the key's policy allows
// cloudwatch.amazonaws.com kms:Decrypt and kms:GenerateDataKey* only on
// behalf of this account (an aws:SourceAccount or aws:SourceArn
// condition), and otherwise what is missing.
func cloudWatchKeyProblem(t *testing.T, tpl *samtemplate.Template, c samtemplate.Context, keyID string) string {
	t.Helper()
	v, err := tpl.Resolve(tpl.Resources[keyID].Properties["KeyPolicy"], c)
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := v.(map[string]any)
	stmts, _ := policy["Statement"].([]any)
	need := map[string]bool{"kms:Decrypt": false, "kms:GenerateDataKey*": false}
	for _, s := range stmts {
		st, _ := s.(map[string]any)
		if st["Effect"] != "Allow" {
			continue
		}
		principal, _ := st["Principal"].(map[string]any)
		if !contains(stringList(principal["Service"]), "cloudwatch.amazonaws.com") {
			continue
		}
		if !forAccount(st["Condition"], c.WithDefaults().AccountID) {
			return "whose key policy lets cloudwatch.amazonaws.com use the key without an aws:SourceAccount or aws:SourceArn condition naming this account: alarms of any account could use it"
		}
		for _, a := range stringList(st["Action"]) {
			switch a {
			case "kms:*":
				need["kms:Decrypt"], need["kms:GenerateDataKey*"] = true, true
			case "kms:Decrypt", "kms:GenerateDataKey*":
				need[a] = true
			}
		}
	}
	if !need["kms:Decrypt"] || !need["kms:GenerateDataKey*"] {
		return "whose key policy does not let cloudwatch.amazonaws.com use kms:Decrypt and kms:GenerateDataKey*"
	}
	return ""
}

// forAccount reports whether a statement's resolved Condition confines a
// service principal to requests made for account: aws:SourceAccount equal
// to it, or aws:SourceArn an ARN in it.
func forAccount(condition any, account string) bool {
	ops, _ := condition.(map[string]any)
	for op, kv := range ops {
		keys, _ := kv.(map[string]any)
		for k, v := range keys {
			for _, val := range stringList(v) {
				switch {
				case strings.EqualFold(k, "aws:SourceAccount") && op == "StringEquals" && val == account:
					return true
				case strings.EqualFold(k, "aws:SourceArn") && strings.HasPrefix(op, "Arn") && strings.Count(val, ":") >= 5 && strings.Split(val, ":")[4] == account:
					return true
				}
			}
		}
	}
	return false
}

// stringList returns a string or a list of strings as a list.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

func TestTemplateAlarmsCanPublishToTheirTopic(t *testing.T) {
	const inv = "every alarm's topic is unencrypted or under a customer-managed key that lets CloudWatch use it for this account's alarms (never alias/aws/sns)"
	tpl := loadProject(t)
	contexts := deployments(t, tpl)
	contexts["unencrypted"] = deployment(t, tpl, samtemplate.Context{Params: map[string]string{"AlarmTopicEncryption": "none"}})
	for name, c := range contexts {
		t.Run(name, func(t *testing.T) {
			for _, p := range alarmTargetProblems(t, tpl, c) {
				broken(t, inv, "%s", p)
			}
		})
	}
	// The check itself: it rejects the AWS-managed key, a key of our own
	// whose policy forgets CloudWatch, and one that lets CloudWatch use it
	// for any account's alarms.
	raw, err := os.ReadFile(projectTemplate)
	if err != nil {
		t.Fatal(err)
	}
	const line = "KmsMasterKeyId: !If [EncryptsAlarmTopic, !GetAtt AlarmTopicKey.Arn, !Ref AWS::NoValue]"
	if !strings.Contains(string(raw), line) {
		t.Fatalf("template.yaml no longer has %q; update this test", line)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"AWS-managed key", line, "KmsMasterKeyId: alias/aws/sns", "AWS-managed key alias/aws/sns"},
		{"AWS-managed key by ARN", line, "KmsMasterKeyId: !Sub arn:${AWS::Partition}:kms:${AWS::Region}:${AWS::AccountId}:alias/aws/sns", "AWS-managed key"},
		{"key policy without CloudWatch", "Service: cloudwatch.amazonaws.com", "Service: logs.amazonaws.com", "does not let cloudwatch.amazonaws.com"},
		{"key policy for any account's alarms", "            Condition:\n              StringEquals:\n                aws:SourceAccount: !Ref AWS::AccountId\n", "", "without an aws:SourceAccount or aws:SourceArn condition"},
		{"a key from elsewhere", line, "KmsMasterKeyId: arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555", "not a customer-managed key of this template"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(raw), tc.from) {
				t.Fatalf("template.yaml no longer has %q; update this test", tc.from)
			}
			bad, err := samtemplate.Parse([]byte(strings.Replace(string(raw), tc.from, tc.to, 1)))
			if err != nil {
				t.Fatal(err)
			}
			problems := alarmTargetProblems(t, bad, deployment(t, bad, samtemplate.Context{}))
			if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Errorf("problems = %q, want one saying %q", problems, tc.want)
			}
		})
	}
}

func TestTemplateMaxBodyBytesIsWhatLambdaReceives(t *testing.T) {
	const inv = "MaxBodyBytes defaults to, and is bounded by, the largest body Lambda receives from the HTTP API (receiver.DefaultMaxBodyBytes)"
	p := loadProject(t).Parameters["MaxBodyBytes"]
	want := strconv.Itoa(receiver.DefaultMaxBodyBytes)
	if p.MaxValue != want {
		broken(t, inv, "MaxValue = %q, want %s", p.MaxValue, want)
	}
	if p.Default != want {
		broken(t, inv, "Default = %q, want %s", p.Default, want)
	}
}
