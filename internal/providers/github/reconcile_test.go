package github

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	"github.com/hookinbox/hookinbox/webhook"
)

// A 429 with Retry-After is waited out and retried inside the deadline;
// a spent limit whose reset comes after the deadline fails the run
// without waiting.
func TestGitHubRateLimitsAreWaitedOutWithinTheDeadline(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	var resetAt int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		switch {
		case resetAt != 0:
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(resetAt, 10))
			w.WriteHeader(http.StatusForbidden)
		case calls == 1:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			_, _ = w.Write([]byte(`[]`))
		}
	}))
	defer srv.Close()
	var slept []time.Duration
	g := &deliveries{
		Hooks: []string{"repos/a/b/hooks/1"}, Token: secretstest.Static("t"), BaseURL: srv.URL,
		Inbox: noClaims{},
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	now := time.Now()
	if _, _, err := g.Next(ctx, now.Add(-time.Hour), now); err != nil {
		t.Fatalf("after one 429: %v", err)
	}
	if len(slept) != 1 || slept[0] != 7*time.Second || calls != 2 {
		t.Fatalf("slept %v over %d calls, want 7s once and a retry", slept, calls)
	}

	mu.Lock()
	resetAt, calls = time.Now().Add(time.Hour).Unix(), 0
	mu.Unlock()
	_, _, err := g.Next(ctx, now.Add(-time.Hour), now)
	if err == nil || !strings.Contains(err.Error(), "past this run's deadline") {
		t.Fatalf("spent limit resetting after the deadline: %v", err)
	}
	if len(slept) != 1 || calls != 1 {
		t.Errorf("slept %v over %d calls, want no wait past the deadline", slept, calls)
	}
}

// noClaims is an inbox that holds no claim.
type noClaims struct{}

func (noClaims) Claimed(context.Context, webhook.Key) (bool, error) { return false, nil }
func (noClaims) EndHold(context.Context, webhook.Key) (bool, error) { return true, nil }
