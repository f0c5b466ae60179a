package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// A secret the local stack gives inline stands, for the IAM check, for its
// ARN parameter set; a parameter the stack sets keeps its value, and one
// without an inline secret stays unset.
func TestDeployedParams(t *testing.T) {
	tpl, err := samtemplate.Parse([]byte(`
Parameters:
  StripeWebhookSecretArn: {Type: String, Default: ""}
  GoPayClientSecretArn: {Type: String, Default: ""}
  OtherArn: {Type: String, Default: ""}
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          STRIPE_WEBHOOK_SECRET_ARN: !Ref StripeWebhookSecretArn
          GOPAY_CLIENT_SECRET_ARN: !Ref GoPayClientSecretArn
          OTHER_ARN: !Ref OtherArn
`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := deployedParams(&devstack.Stack{Template: tpl, Params: map[string]string{"StripeWebhookSecretArn": "arn:given"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"StripeWebhookSecretArn": "arn:given",
		"GoPayClientSecretArn":   "arn:aws:secretsmanager:us-east-1:123456789012:secret:local-inline-GoPayClientSecretArn-AbCdEf",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("deployedParams (-got +want):\n%s", diff)
	}
}
