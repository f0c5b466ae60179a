package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookinbox/hookinbox/internal/providers/github"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
)

// TestLocalStack: a module's command finds the running stack the state
// file describes, with its tables and an AWS configuration for its
// emulators; without one it is told how to start one.
func TestLocalStack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	st := &devState{PID: os.Getpid(), StackName: "hookinbox", Region: "us-east-1",
		Env:    map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:2", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"},
		Tables: map[string]string{"ShopTable": "hookinbox-shop"}}
	if err := writeState(path, st); err != nil {
		t.Fatal(err)
	}
	stack, err := LocalStack(path)
	if err != nil {
		t.Fatal(err)
	}
	if stack.Name != "hookinbox" || stack.Tables["ShopTable"] != "hookinbox-shop" || stack.AWS.Region != "us-east-1" {
		t.Errorf("LocalStack = %+v", stack)
	}
	if _, err := LocalStack(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, errNoStack) {
		t.Errorf("LocalStack of no state file: %v, want errNoStack", err)
	}
}

// TestReceiverSecret: a provider's secret is the running receiver's; the
// provider of the webhook URL has dev --secret's when the receiver's
// environment lacks it.
func TestReceiverSecret(t *testing.T) {
	st := &devState{WebhookURL: "http://127.0.0.1:3000/webhooks/stripe", WebhookSecret: "whsec_dev",
		Functions: []stateFunction{{LogicalID: "ReceiverFunction", Env: map[string]string{"GITHUB_WEBHOOK_SECRET": "gh"}}}}
	if got := st.receiverSecret(stripe.Provider{}); got != "whsec_dev" {
		t.Errorf("stripe's: %q, want dev --secret's", got)
	}
	if got := st.receiverSecret(github.Provider{}); got != "gh" {
		t.Errorf("github's: %q, want the receiver's", got)
	}
}
