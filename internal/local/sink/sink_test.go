package sink_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/hookinbox/hookinbox/internal/local/sink"
)

const (
	secret      = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	otherSecret = "whsec_bG9jYWwtaG9va2luYm94LXN0YW5kYXJkLXdlYmhvb2tz"
	body        = `{"id":"msg_1","provider":"stripe","type":"checkout.session.completed","key":"stripe#evt_1","received_at":"2026-12-02T03:00:00Z","payload":{"id":"evt_1"}}`
)

// post sends body to the sink as hookinbox does, signed at at with
// secrets, with webhook-id id, and returns the answer's status and text.
func post(t *testing.T, url, id, body string, at time.Time, secrets ...string) (int, string) {
	t.Helper()
	return postSigned(t, url, id, body, body, at, secrets...)
}

// postSigned is post with the signature of signed, not of body.
func postSigned(t *testing.T, url, id, body, signed string, at time.Time, secrets ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range standard.Headers([]byte(signed), id, at, secrets...) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(text)
}

func TestSinkVerifiesAndCountsRedeliveries(t *testing.T) {
	now := time.Now()
	s, err := sink.New(sink.Options{Secrets: []string{secret}, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	type got struct {
		Status  int
		Attempt int
		Key     string
	}
	for _, tc := range []struct {
		name    string
		id      string
		body    string
		signed  string // the body the signature is of; default body
		at      time.Time
		secrets []string
		want    got
		wantErr error // errors.Is the delivery's error
	}{
		{"good", "msg_1", body, "", now, []string{secret}, got{200, 1, "stripe#evt_1"}, nil},
		{"redelivered", "msg_1", body, "", now.Add(-time.Minute), []string{secret}, got{200, 2, "stripe#evt_1"}, nil},
		{"rotating sender: one of two signatures", "msg_1", body, "", now, []string{otherSecret, secret}, got{200, 3, "stripe#evt_1"}, nil},
		{"wrong secret", "msg_1", body, "", now, []string{otherSecret}, got{Status: 401}, provider.ErrBadSignature},
		{"stale", "msg_1", body, "", now.Add(-time.Hour), []string{secret}, got{Status: 401}, provider.ErrStale},
		{"future", "msg_1", body, "", now.Add(time.Hour), []string{secret}, got{Status: 401}, provider.ErrFuture},
		{"unsigned", "msg_1", body, "", now, nil, got{Status: 401}, provider.ErrNoSignature},
		{"body altered after signing", "msg_1", strings.Replace(body, "evt_1", "evt_2", 1), body, now, []string{secret}, got{Status: 401}, provider.ErrBadSignature},
		{"id differs from webhook-id", "msg_2", body, "", now, []string{secret}, got{400, 1, "stripe#evt_1"}, sink.ErrIDMismatch},
		{"not a destination body", "msg_3", `{"type":"x"}`, "", now, []string{secret}, got{Status: 400, Attempt: 1}, sink.ErrNotDestinationBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			signed := tc.signed
			if signed == "" {
				signed = tc.body
			}
			status, text := postSigned(t, srv.URL, tc.id, tc.body, signed, tc.at, tc.secrets...)
			all := s.Deliveries()
			d := all[len(all)-1]
			if diff := cmp.Diff(tc.want, got{d.Status, d.Attempt, d.Body.Key}); diff != "" || status != tc.want.Status {
				t.Errorf("answered %d; delivery (-want +got):\n%s", status, diff)
			}
			if !errors.Is(d.Err, tc.wantErr) || (tc.wantErr == nil) != (d.Err == nil) {
				t.Errorf("error %v, want %v", d.Err, tc.wantErr)
			}
			if tc.wantErr != nil && !strings.Contains(text, d.Err.Error()) {
				t.Errorf("answer %q does not say why (%v)", text, d.Err)
			}
		})
	}
}

func TestSinkFailFirst(t *testing.T) {
	s, err := sink.New(sink.Options{Secrets: []string{secret}, Status: 503, FailFirst: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	var got []int
	for range 4 {
		status, _ := post(t, srv.URL, "msg_1", body, time.Now(), secret)
		got = append(got, status)
	}
	if diff := cmp.Diff([]int{503, 503, 200, 200}, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}

func TestSinkRefusesGetAndBadSecrets(t *testing.T) {
	s, err := sink.New(sink.Options{Secrets: []string{secret}, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET answered %d, want 405", rec.Code)
	}
	for _, secrets := range [][]string{nil, {"whsec_not base64!"}, {"whsk_bG9jYWwtaG9va2luYm94LXN0YW5kYXJkLWVkMjU1MTk="}} {
		if _, err := sink.New(sink.Options{Secrets: secrets}); err == nil {
			t.Errorf("New(%q) accepted", secrets)
		}
	}
	if _, err := sink.New(sink.Options{Secrets: []string{sink.NewSecret()}}); err != nil {
		t.Errorf("a fresh secret: %v", err)
	}
}
