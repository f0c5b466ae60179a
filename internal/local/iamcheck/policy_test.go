package iamcheck

import (
	"testing"
)

func statements(t *testing.T, docs ...map[string]any) []Statement {
	t.Helper()
	var out []Statement
	for i, d := range docs {
		st, err := parseStatement(d, "statement "+string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	return out
}

const (
	table = "arn:aws:dynamodb:us-east-1:123456789012:table/s-inbox"
	queue = "arn:aws:sqs:us-east-1:123456789012:s-events"
)

func TestDecide(t *testing.T) {
	allow := func(action, resource any) map[string]any {
		return map[string]any{"Effect": "Allow", "Action": action, "Resource": resource}
	}
	watchOnly := allow("dynamodb:DeleteItem", table)
	watchOnly["Condition"] = map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": []any{"watch#gopay"}}}
	anyWatch := allow("dynamodb:Query", table)
	anyWatch["Condition"] = map[string]any{"ForAnyValue:StringLike": map[string]any{"dynamodb:LeadingKeys": "watch#*"}}
	tests := []struct {
		name   string
		stmts  []map[string]any
		access Access
		want   bool
	}{
		{"exact", []map[string]any{allow("dynamodb:GetItem", table)}, Access{Action: "dynamodb:GetItem", Resources: []string{table}}, true},
		{"action case ignored", []map[string]any{allow("DynamoDB:getitem", table)}, Access{Action: "dynamodb:GetItem", Resources: []string{table}}, true},
		{"other action", []map[string]any{allow("dynamodb:GetItem", table)}, Access{Action: "dynamodb:Query", Resources: []string{table}}, false},
		{"table grant is not its index", []map[string]any{allow("dynamodb:Query", table)}, Access{Action: "dynamodb:Query", Resources: []string{table + "/index/pending"}}, false},
		{"index grant is not its table", []map[string]any{allow("dynamodb:Query", table+"/index/pending")}, Access{Action: "dynamodb:Query", Resources: []string{table}}, false},
		{"resource wildcard crosses slashes", []map[string]any{allow("dynamodb:Query", table+"/*")}, Access{Action: "dynamodb:Query", Resources: []string{table + "/index/pending"}}, true},
		{"action wildcard", []map[string]any{allow("sqs:*Message", queue)}, Access{Action: "sqs:SendMessage", Resources: []string{queue}}, true},
		{"question mark is one character", []map[string]any{allow("secretsmanager:GetSecretValue", "arn:aws:secretsmanager:us-east-1:1:secret:k-??????")}, Access{Action: "secretsmanager:GetSecretValue", Resources: []string{"arn:aws:secretsmanager:us-east-1:1:secret:k-AbCdEf"}}, true},
		{"resource case matters", []map[string]any{allow("sqs:SendMessage", queue)}, Access{Action: "sqs:SendMessage", Resources: []string{"arn:aws:sqs:us-east-1:123456789012:S-events"}}, false},
		{"one of the resources", []map[string]any{allow("ses:SendEmail", "arn:aws:ses:us-east-1:1:identity/example.com")}, Access{Action: "ses:SendEmail", Resources: []string{"arn:aws:ses:us-east-1:1:identity/a@example.com", "arn:aws:ses:us-east-1:1:identity/example.com"}}, true},
		{"explicit deny wins", []map[string]any{allow("sqs:*", "*"), {"Effect": "Deny", "Action": "sqs:DeleteMessage", "Resource": queue}}, Access{Action: "sqs:DeleteMessage", Resources: []string{queue}}, false},
		{"NotAction", []map[string]any{{"Effect": "Allow", "NotAction": "sqs:DeleteMessage", "Resource": queue}}, Access{Action: "sqs:DeleteMessage", Resources: []string{queue}}, false},
		{"NotAction allows the rest", []map[string]any{{"Effect": "Allow", "NotAction": "sqs:DeleteMessage", "Resource": queue}}, Access{Action: "sqs:SendMessage", Resources: []string{queue}}, true},
		{"NotResource", []map[string]any{{"Effect": "Allow", "Action": "sqs:SendMessage", "NotResource": queue}}, Access{Action: "sqs:SendMessage", Resources: []string{queue}}, false},
		{"leading keys held", []map[string]any{watchOnly}, Access{Action: "dynamodb:DeleteItem", Resources: []string{table}, LeadingKeys: []string{"watch#gopay"}}, true},
		{"leading keys not held", []map[string]any{watchOnly}, Access{Action: "dynamodb:DeleteItem", Resources: []string{table}, LeadingKeys: []string{"stripe#evt_1"}}, false},
		{"for any value like", []map[string]any{anyWatch}, Access{Action: "dynamodb:Query", Resources: []string{table}, LeadingKeys: []string{"watch#gopay"}}, true},
		{"for any value needs a value", []map[string]any{anyWatch}, Access{Action: "dynamodb:Query", Resources: []string{table}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := decide(statements(t, tt.stmts...), tt.access)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Allowed; got != tt.want {
				t.Errorf("Decide(%v) allowed = %v, want %v", tt.access, got, tt.want)
			}
		})
	}
}

// A condition the check cannot evaluate is an error, never a guess.
func TestDecideUnknownCondition(t *testing.T) {
	st := statements(t, map[string]any{
		"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": queue,
		"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "true"}},
	})
	if _, err := decide(st, Access{Action: "sqs:SendMessage", Resources: []string{queue}}); err == nil {
		t.Error("Decide evaluated a condition it does not know")
	}
}
