package paddle_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/paddle"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
)

func TestProviderSignIsWhatVerifierAccepts(t *testing.T) {
	var p provider.Provider = paddle.Provider{}
	body := readFile(t, "transaction.completed.json")
	at := time.Date(2024, 4, 12, 10, 18, 50, 0, time.UTC)
	tests := []struct {
		name    string
		env     map[string]string
		signAt  time.Time
		wantErr string // "" accepted
	}{
		{name: "now", signAt: at},
		{name: "10 minutes old under the default tolerance", signAt: at.Add(-10 * time.Minute), wantErr: "stale"},
		{name: "10 minutes old under PADDLE_TOLERANCE=15m", env: map[string]string{"PADDLE_TOLERANCE": "15m"}, signAt: at.Add(-10 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &provider.Env{Getenv: func(k string) string { return tt.env[k] }, Now: func() time.Time { return at }}
			v, err := p.Verifier([]string{oldSecret, secret}, env)
			if err != nil {
				t.Fatal(err)
			}
			req, err := paddle.Sender().Sign(sample.Event{Body: body, File: "transaction.completed.json"}, []string{secret}, tt.signAt)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := v.Verify(context.Background(), req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Verify = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(evs) != 1 || evs[0].Key() != "paddle#evt_01hv8x2acma6xvfynhhb0s8z7c" || evs[0].Type != "transaction.completed" {
				t.Errorf("Verify(Sign) = %v, %v; want paddle#evt_01hv8x2acma6xvfynhhb0s8z7c, transaction.completed", evs, err)
			}
		})
	}
}

func TestProviderVerifierSettings(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		env     map[string]string
	}{
		{name: "no key", env: nil},
		{name: "an empty key", secrets: []string{""}},
		{name: "a tolerance that is not a duration", secrets: []string{secret}, env: map[string]string{"PADDLE_TOLERANCE": "five minutes"}},
		{name: "a negative tolerance", secrets: []string{secret}, env: map[string]string{"PADDLE_TOLERANCE": "-1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := paddle.Provider{}.Verifier(tt.secrets, &provider.Env{Getenv: func(k string) string { return tt.env[k] }})
			if err == nil {
				t.Error("Verifier accepted a configuration that cannot verify")
			}
		})
	}
}
