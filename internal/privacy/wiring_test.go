package privacy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
)

// TestTheSubjectKeyIsReadWhenFirstNeeded: a function whose subject key is
// in Secrets Manager reads it at its first hashing, not when it is built
// (before its first answer), and once while it is fresh.
func TestTheSubjectKeyIsReadWhenFirstNeeded(t *testing.T) {
	var reads atomic.Int32
	sm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads.Add(1)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_, _ = w.Write([]byte(`{"ARN":"arn:aws:secretsmanager:us-east-1:123456789012:secret:key","SecretString":"the-key"}`))
	}))
	defer sm.Close()
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(sm.URL),
		Credentials: credentials.NewStaticCredentialsProvider("id", "secret", "")}
	env := &provider.Env{AWS: cfg, Getenv: func(k string) string {
		if k == privacy.KeyEnv+"_ARN" {
			return "arn:aws:secretsmanager:us-east-1:123456789012:secret:key"
		}
		return ""
	}}
	ctx := context.Background()
	h, ok, err := privacy.FromEnv(ctx, env)
	if err != nil || !ok {
		t.Fatalf("FromEnv: %v, %v", ok, err)
	}
	if n := reads.Load(); n != 0 {
		t.Fatalf("built with %d reads of the key, want none", n)
	}
	sub := []provider.Subject{provider.EmailSubject("jane@example.com")}
	got, err := h.Index(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := privacy.NewHasher(privacy.Keys{"the-key"}).Index(ctx, sub)
	if got[0] != want[0] {
		t.Errorf("hashed under another key: %v, want %v", got, want)
	}
	if _, err := h.Index(ctx, sub); err != nil || reads.Load() != 1 {
		t.Errorf("after two hashings: %d reads, %v; want one", reads.Load(), err)
	}
}
