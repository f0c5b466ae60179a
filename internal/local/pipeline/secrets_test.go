package pipeline_test

import (
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/verify"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
)

// TestLocalStandardKeys: the local receiver's Standard Webhooks secrets are
// usable, and its whpk_ key is the public key of the local signing key, so
// `hookinbox send standard --v1a` is accepted.
func TestLocalStandardKeys(t *testing.T) {
	if got := verifytest.StandardPublicKey(pipeline.StandardSigningKey); got != pipeline.StandardPublicKey {
		t.Errorf("public key of StandardSigningKey = %s, want StandardPublicKey %s", got, pipeline.StandardPublicKey)
	}
	spec, _ := verify.Lookup(verify.StandardProvider)
	if _, err := spec.New([]string{pipeline.StandardSecret, pipeline.StandardPublicKey}, verify.Options{}); err != nil {
		t.Errorf("the local Standard Webhooks secrets: %v", err)
	}
}
