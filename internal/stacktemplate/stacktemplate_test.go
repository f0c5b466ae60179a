package stacktemplate

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/hookinbox/hookinbox"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"
)

const crm = `
Description: crm (hookinbox with a CRM)
Parameters:
  CrmUrl:
    Type: String
Conditions:
  HasCrm: !Not [!Equals [!Ref CrmUrl, ""]]
Resources:
  ContactsTable:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${AWS::StackName}-contacts"
      AttributeDefinitions:
        - {AttributeName: pk, AttributeType: S}
        - {AttributeName: sk, AttributeType: S}
      KeySchema:
        - {AttributeName: pk, KeyType: HASH}
        - {AttributeName: sk, KeyType: RANGE}
      BillingMode: PAY_PER_REQUEST
  ScratchTable:
    Type: AWS::DynamoDB::Table
    DeletionPolicy: Delete
    UpdateReplacePolicy: Delete
    Properties:
      AttributeDefinitions:
        - {AttributeName: pk, AttributeType: S}
      KeySchema:
        - {AttributeName: pk, KeyType: HASH}
      BillingMode: PAY_PER_REQUEST
Outputs:
  ContactsTableName:
    Value: !Ref ContactsTable
Processor:
  Environment:
    CRM_URL: !Ref CrmUrl
    CONTACTS_TABLE: !Ref ContactsTable
  Policy:
    - Sid: Contacts
      Effect: Allow
      Action: [dynamodb:GetItem, dynamodb:PutItem]
      Resource: !GetAtt ContactsTable.Arn
`

func generated(t *testing.T, business string) ([]byte, *samtemplate.Template) {
	t.Helper()
	out, err := Generate([]byte(business))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := samtemplate.Parse(out)
	if err != nil {
		t.Fatalf("the generated template does not parse: %v", err)
	}
	return out, tpl
}

// TestGenerateKeepsHookinboxAndAddsTheBusiness is the contract: the shop
// goes, the business comes in, everything else of hookinbox's template is
// as it was.
func TestGenerateKeepsHookinboxAndAddsTheBusiness(t *testing.T) {
	out, got := generated(t, crm)
	base, err := samtemplate.Parse(hookinbox.Template())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), header) {
		t.Errorf("the generated template does not start with header")
	}
	if want := "crm (hookinbox with a CRM): " + base.Description; got.Description != want {
		t.Errorf("Description = %q, want %q", got.Description, want)
	}
	for _, name := range shopParameters {
		if _, ok := got.Parameters[name]; ok {
			t.Errorf("parameter %s of the example shop is still there", name)
		}
	}
	for _, name := range shopResources {
		if _, ok := got.Resources[name]; ok {
			t.Errorf("resource %s of the example shop is still there", name)
		}
	}
	for _, name := range shopOutputs {
		if _, ok := got.Outputs[name]; ok {
			t.Errorf("output %s of the example shop is still there", name)
		}
	}
	if _, ok := got.Parameters["CrmUrl"]; !ok {
		t.Errorf("no CrmUrl parameter")
	}
	if _, ok := got.Conditions["HasCrm"]; !ok {
		t.Errorf("no HasCrm condition")
	}
	if _, ok := got.Outputs["ContactsTableName"]; !ok {
		t.Errorf("no ContactsTableName output")
	}
	// Every resource of hookinbox's but the shop's is kept as it was,
	// but for the processor's environment and role.
	for id, want := range base.Resources {
		if id == "ShopTable" || id == "ProcessorFunction" || id == "ProcessorRole" {
			continue
		}
		if !reflect.DeepEqual(got.Resources[id], want) {
			t.Errorf("resource %s changed", id)
		}
	}
	for name, want := range base.Parameters {
		if name == "StripeEventTypes" {
			continue // TestGenerateStripeEventTypesAreTheBusinesss
		}
		if _, shop := got.Parameters[name]; shop || !contains(shopParameters, name) {
			if !reflect.DeepEqual(got.Parameters[name], want) {
				t.Errorf("parameter %s changed", name)
			}
		}
	}
	if !reflect.DeepEqual(got.Globals, base.Globals) {
		t.Errorf("Globals changed")
	}

	env := got.Resources["ProcessorFunction"].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	baseEnv := base.Resources["ProcessorFunction"].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	for k, v := range baseEnv {
		if contains(shopEnvironment, k) {
			if _, ok := env[k]; ok {
				t.Errorf("the processor still has the shop's %s", k)
			}
		} else if !reflect.DeepEqual(env[k], v) {
			t.Errorf("the processor's %s changed: %v, want %v", k, env[k], v)
		}
	}
	if env["CRM_URL"] != (samtemplate.Ref{Name: "CrmUrl"}) || env["CONTACTS_TABLE"] != (samtemplate.Ref{Name: "ContactsTable"}) {
		t.Errorf("the processor's CRM_URL, CONTACTS_TABLE = %v, %v; want the business's !Refs", env["CRM_URL"], env["CONTACTS_TABLE"])
	}

	sids := statementSids(t, out)
	for _, sid := range shopStatements {
		if contains(sids, sid) {
			t.Errorf("ProcessorRole still has the shop's statement %s", sid)
		}
	}
	want := append(without(statementSids(t, hookinbox.Template()), shopStatements), "Contacts")
	if !reflect.DeepEqual(sids, want) {
		t.Errorf("ProcessorRole's statements %v, want hookinbox's but the shop's, then the business's: %v", sids, want)
	}

	// The business's tables keep their data unless it says otherwise.
	for table, policy := range map[string]string{"ContactsTable": "Retain", "ScratchTable": "Delete"} {
		for _, key := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
			if got := scalar(value(node(t, out), "Resources", table, key)); got != policy {
				t.Errorf("%s %s = %q, want %s", table, key, got, policy)
			}
		}
	}
}

// TestGenerateWithoutBusinessIsTheStackWithoutTheShop: an empty business
// file gives hookinbox's stack with no business, which nothing mentions.
func TestGenerateWithoutBusinessIsTheStackWithoutTheShop(t *testing.T) {
	out, _ := generated(t, "{}")
	for _, name := range shopNames {
		if strings.Contains(string(out), name) {
			t.Errorf("the template without a business still mentions %s", name)
		}
	}
}

// TestGenerateStripeEventTypesAreTheBusinesss: the reconciler of a
// generated stack lists the Stripe types the business file names, and
// never the example shop's.
func TestGenerateStripeEventTypesAreTheBusinesss(t *testing.T) {
	tests := map[string]struct {
		business string
		want     []string
	}{
		"invoice.paid": {
			business: crm + "EventTypes:\n  stripe: [invoice.paid, customer.subscription.deleted]\n  shopify: [orders/paid]\n",
			want:     []string{"invoice.paid", "customer.subscription.deleted"},
		},
		"no Stripe types": {business: crm + "EventTypes:\n  shopify: [orders/paid]\n"},
		"no EventTypes":   {business: crm},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, tpl := generated(t, tt.business)
			env, err := tpl.FunctionEnv("ReconcilerFunction", samtemplate.Context{
				Lookup: func(id, attr string) (string, error) { return id + "." + attr, nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			// What the deployed reconciler reads, given a Stripe key.
			env["STRIPE_API_KEY"] = "sk_test_x"
			src, err := stripe.Provider{}.Reconciler(context.Background(), &provider.Env{Getenv: func(k string) string { return env[k] }})
			if len(tt.want) == 0 {
				if got := env["STRIPE_EVENT_TYPES"]; got != "" {
					t.Errorf("STRIPE_EVENT_TYPES = %q, want empty (not the example shop's types)", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			if events, ok := src.List.(*stripe.Events); ok {
				types = events.Types
			}
			if diff := cmp.Diff(tt.want, types); diff != "" {
				t.Errorf("the reconciler's Stripe types (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventTypes(t *testing.T) {
	got, err := EventTypes([]byte("EventTypes:\n  stripe: [invoice.paid]\n  shopify: [orders/paid, orders/create]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"stripe": {"invoice.paid"}, "shopify": {"orders/paid", "orders/create"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EventTypes (-want +got):\n%s", diff)
	}
}

func TestGenerateRefuses(t *testing.T) {
	tests := map[string]string{
		"a parameter hookinbox has":              "Parameters:\n  LogLevel: {Type: String}\n",
		"a resource hookinbox has":               "Resources:\n  InboxTable: {Type: AWS::SNS::Topic}\n",
		"an output hookinbox has":                "Outputs:\n  WebhookUrl: {Value: x}\n",
		"a processor variable hookinbox has":     "Processor:\n  Environment:\n    INBOX_TABLE: x\n",
		"a statement hookinbox has":              "Processor:\n  Policy:\n    - {Sid: ParkInDLQ, Effect: Allow, Action: sqs:SendMessage, Resource: x}\n",
		"an unknown key":                         "Globals: {}\n",
		"an unknown processor key":               "Processor:\n  Role: x\n",
		"a list":                                 "- Parameters\n",
		"a policy that is not a list":            "Processor:\n  Policy: {Sid: X}\n",
		"a receiver variable hookinbox has":      "Receiver:\n  Environment:\n    INBOX_TABLE: x\n",
		"a receiver statement beyond secrets":    "Receiver:\n  Policy:\n    - {Sid: X, Effect: Allow, Action: [secretsmanager:GetSecretValue, sqs:SendMessage], Resource: x}\n",
		"a receiver statement of any action":     "Receiver:\n  Policy:\n    - {Sid: X, Effect: Allow, NotAction: sqs:SendMessage, Resource: x}\n",
		"a receiver grant of every secret":       "Receiver:\n  Policy:\n    - {Sid: X, Effect: Allow, Action: secretsmanager:GetSecretValue, Resource: \"*\"}\n",
		"a receiver grant without a resource":    "Receiver:\n  Policy:\n    - {Sid: X, Effect: Allow, Action: secretsmanager:GetSecretValue}\n",
		"a receiver grant built by a function":   "Receiver:\n  Policy:\n    - {Sid: X, Effect: Allow, Action: secretsmanager:GetSecretValue, Resource: {\"Fn::Join\": [\"\", [\"*\"]]}}\n",
		"a receiver statement hookinbox has":     "Receiver:\n  Policy:\n    - {Sid: SubjectKeyRead, Effect: Allow, Action: secretsmanager:GetSecretValue, Resource: x}\n",
		"a reconciler statement hookinbox has":   "Reconciler:\n  Policy:\n    - {Sid: PendingIndex, Effect: Allow, Action: dynamodb:Query, Resource: x}\n",
		"a reconciler policy that is not a list": "Reconciler:\n  Policy: {Sid: X}\n",
		"an unknown reconciler key":              "Reconciler:\n  Role: x\n",
		"event types that are not lists":         "EventTypes:\n  stripe: invoice.paid\n",
		"a comma in an event type":               "EventTypes:\n  stripe: [\"invoice.paid,invoice.created\"]\n",
		"21 Stripe types":                        "EventTypes:\n  stripe: [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u]\n",
	}
	for name, business := range tests {
		if _, err := Generate([]byte(business)); err == nil {
			t.Errorf("%s: Generate accepted it", name)
		}
	}
}

// TestGenerateAddsAProvidersVariables: a team's own provider gets its
// secret in the receiver's environment and its settings in the
// reconciler's, beside hookinbox's.
func TestGenerateAddsAProvidersVariables(t *testing.T) {
	_, got := generated(t, "Parameters:\n  LedgerSecret: {Type: String, NoEcho: true}\n"+
		"Receiver:\n  Environment:\n    LEDGER_WEBHOOK_SECRET: !Ref LedgerSecret\n"+
		"Reconciler:\n  Environment:\n    LEDGER_API_URL: https://ledger.example\n")
	for fn, want := range map[string]map[string]any{
		"ReceiverFunction":   {"LEDGER_WEBHOOK_SECRET": samtemplate.Ref{Name: "LedgerSecret"}},
		"ReconcilerFunction": {"LEDGER_API_URL": "https://ledger.example"},
	} {
		env := got.Resources[fn].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s's %s = %v, want %v", fn, k, env[k], v)
			}
		}
		if _, ok := env["INBOX_TABLE"]; !ok {
			t.Errorf("%s lost hookinbox's INBOX_TABLE", fn)
		}
	}
}

// TestGenerateGrantsAReconcilerSecret: a team's reconcile source that
// reads its API key by ARN, as hookinbox's sources read theirs
// (GITHUB_TOKEN_ARN), gets the grant it needs from Reconciler.Policy,
// after hookinbox's statements.
func TestGenerateGrantsAReconcilerSecret(t *testing.T) {
	_, got := generated(t, "Parameters:\n  AcmeApiKeyArn: {Type: String}\n"+
		"Reconciler:\n  Environment:\n    ACME_API_KEY_ARN: !Ref AcmeApiKeyArn\n"+
		"  Policy:\n    - {Sid: AcmeKeyRead, Effect: Allow, Action: secretsmanager:GetSecretValue, Resource: !Ref AcmeApiKeyArn}\n")
	fn := got.Resources["ReconcilerFunction"].Properties
	if env := fn["Environment"].(map[string]any)["Variables"].(map[string]any); env["ACME_API_KEY_ARN"] != (samtemplate.Ref{Name: "AcmeApiKeyArn"}) {
		t.Errorf("ACME_API_KEY_ARN = %v", env["ACME_API_KEY_ARN"])
	}
	statements := fn["Policies"].([]any)[0].(map[string]any)["Statement"].([]any)
	last := statements[len(statements)-1].(map[string]any)
	if last["Sid"] != "AcmeKeyRead" || last["Resource"] != (samtemplate.Ref{Name: "AcmeApiKeyArn"}) {
		t.Errorf("the reconciler's last statement is %v, want AcmeKeyRead on the key", last)
	}
	if sid := statements[0].(map[string]any)["Sid"]; sid != "InboxClaimAndReenqueue" {
		t.Errorf("the reconciler's first statement is %v, want hookinbox's kept first", sid)
	}
}

// TestGenerateGrantsAReceiverSecret: a team's provider keeps its webhook
// secret in Secrets Manager, as hookinbox's do; the receiver is granted
// reading it, and nothing else can be granted there.
func TestGenerateGrantsAReceiverSecret(t *testing.T) {
	_, got := generated(t, "Parameters:\n  AcmeSecretArn: {Type: String}\n"+
		"Receiver:\n  Environment:\n    ACME_WEBHOOK_SECRET_ARN: !Ref AcmeSecretArn\n"+
		"  Policy:\n    - {Sid: AcmeSecretRead, Effect: Allow, Action: secretsmanager:GetSecretValue, Resource: !Ref AcmeSecretArn}\n")
	fn := got.Resources["ReceiverFunction"].Properties
	if env := fn["Environment"].(map[string]any)["Variables"].(map[string]any); env["ACME_WEBHOOK_SECRET_ARN"] != (samtemplate.Ref{Name: "AcmeSecretArn"}) {
		t.Errorf("ACME_WEBHOOK_SECRET_ARN = %v", env["ACME_WEBHOOK_SECRET_ARN"])
	}
	statements := fn["Policies"].([]any)[0].(map[string]any)["Statement"].([]any)
	last := statements[len(statements)-1].(map[string]any)
	if last["Sid"] != "AcmeSecretRead" || last["Resource"] != (samtemplate.Ref{Name: "AcmeSecretArn"}) {
		t.Errorf("the receiver's last statement is %v, want AcmeSecretRead on the secret", last)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, _ := generated(t, crm)
	b, _ := generated(t, crm)
	if string(a) != string(b) {
		t.Errorf("two generations of the same business differ")
	}
}

func node(t *testing.T, out []byte) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

func statementSids(t *testing.T, tpl []byte) []string {
	t.Helper()
	st, err := processorStatements(node(t, tpl))
	if err != nil {
		t.Fatal(err)
	}
	var sids []string
	for _, s := range st.Content {
		if sid := scalar(value(s, "Sid")); sid != "" {
			sids = append(sids, sid)
		}
	}
	return sids
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func without(list, drop []string) []string {
	var out []string
	for _, v := range list {
		if !contains(drop, v) {
			out = append(out, v)
		}
	}
	return out
}
