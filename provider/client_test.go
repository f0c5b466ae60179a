package provider_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/provider"
)

// rolling is a secret whose value changes to next on the first Refresh.
type rolling struct {
	mu        sync.Mutex
	value     string
	next      string
	refreshes int
}

func (r *rolling) Values(context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return []string{r.value}, nil
}

func (r *rolling) Refresh(_ context.Context, used []string) ([]string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refreshes++
	if r.next != "" {
		r.value, r.next = r.next, ""
	}
	return []string{r.value}, r.value != used[0], nil
}

// TestClient: a refused credential is reloaded and the call made once
// more only when it changed; a 429 is waited out for its Retry-After; a
// wait past the deadline fails at once.
func TestClient(t *testing.T) {
	tests := []struct {
		name       string
		secret     *rolling
		answers    []int // the statuses the API gives, in order
		retryAfter string
		deadline   time.Duration
		wantStatus int
		wantAuth   []string
		wantSlept  []time.Duration
		wantErr    string
	}{
		{"ok", &rolling{value: "k1"}, []int{200}, "", 0, 200, []string{"Bearer k1"}, nil, ""},
		{"refused, then a new key", &rolling{value: "k1", next: "k2"}, []int{401, 200}, "", 0, 200, []string{"Bearer k1", "Bearer k2"}, nil, ""},
		{"refused, the same key", &rolling{value: "k1"}, []int{401, 200}, "", 0, 401, []string{"Bearer k1"}, nil, ""},
		{"rate limited", &rolling{value: "k1"}, []int{429, 200}, "7", 0, 200, []string{"Bearer k1", "Bearer k1"}, []time.Duration{7 * time.Second}, ""},
		{"rate limited thrice", &rolling{value: "k1"}, []int{429, 429, 429, 429}, "1", 0, 429, []string{"Bearer k1", "Bearer k1", "Bearer k1", "Bearer k1"},
			[]time.Duration{time.Second, time.Second, time.Second}, ""},
		{"rate limited past the deadline", &rolling{value: "k1"}, []int{429, 200}, "60", 30 * time.Second, 429, []string{"Bearer k1"}, nil, "past this run's deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var auth []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				auth = append(auth, r.Header.Get("Authorization"))
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.answers[len(auth)-1])
			}))
			defer srv.Close()
			var slept []time.Duration
			c := &provider.Client{Secret: tt.secret, HTTP: srv.Client(),
				Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			resp, err := c.Do(ctx, func(ctx context.Context) (*http.Request, error) {
				return http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil || resp.Status != tt.wantStatus {
				t.Errorf("Do = %d, %v; want %d", resp.Status, err, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.wantAuth, auth); diff != "" {
				t.Errorf("Authorization sent (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSlept, slept); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClientRetriesTransientFailures: with Retries, a 5xx is sent again
// after a backoff; without, it is returned at once.
func TestClientRetriesTransientFailures(t *testing.T) {
	for _, retries := range []int{0, 2} {
		calls := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			if calls < 3 {
				w.WriteHeader(http.StatusBadGateway)
			}
		}))
		var slept []time.Duration
		c := &provider.Client{Secret: &rolling{value: "k"}, HTTP: srv.Client(), Retries: retries,
			Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
		resp, err := c.Do(context.Background(), func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		})
		srv.Close()
		want := map[int]int{0: http.StatusBadGateway, 2: http.StatusOK}[retries]
		if err != nil || resp.Status != want || len(slept) != retries {
			t.Errorf("Retries %d: %d, %v after waits %v; want %d after %d waits", retries, resp.Status, err, slept, want, retries)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		v      string
		want   time.Duration
		wantOK bool
	}{
		{"120", 2 * time.Minute, true},
		{"0", 0, true},
		{now.Add(time.Hour).Format(http.TimeFormat), time.Hour, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{" 120 ", 2 * time.Minute, true},
		{"9223372036", 9223372036 * time.Second, true},
		{"9999999999", math.MaxInt64, true},
		{"9223372037", math.MaxInt64, true},
		{"99999999999999999999999", math.MaxInt64, true},
		{now.AddDate(300, 0, 0).Format(http.TimeFormat), math.MaxInt64, true},
		{"Sun, 06 Nov 1994 08:49:37 GMT", 0, true},
		{"Sunday, 06-Nov-94 08:49:37 GMT", 0, true},
		{"Sun Nov  6 08:49:37 1994", 0, true},
	}
	for _, tt := range tests {
		got, ok := provider.RetryAfter(tt.v, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.wantOK)
		}
	}
}
