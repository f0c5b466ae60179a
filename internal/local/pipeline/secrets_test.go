package pipeline_test

import (
	"testing"

	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
)

// TestLocalStandardKeys: the local receiver's Standard Webhooks secrets are
// usable, and its whpk_ key is the public key of the local signing key, so
// `hookinbox send standard --v1a` is accepted.
func TestLocalStandardKeys(t *testing.T) {
	if got := standard.PublicKey(pipeline.StandardSigningKey); got != pipeline.StandardPublicKey {
		t.Errorf("public key of StandardSigningKey = %s, want StandardPublicKey %s", got, pipeline.StandardPublicKey)
	}
	if _, err := (standard.Provider{}).Verifier([]string{pipeline.StandardSecret, pipeline.StandardPublicKey}, &provider.Env{}); err != nil {
		t.Errorf("the local Standard Webhooks secrets: %v", err)
	}
}
