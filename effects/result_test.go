package effects

import "testing"

func TestResultNames(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"newer applied", NewerResult(true), "applied"},
		{"newer skipped", NewerResult(false), "skipped: older than stored"},
		{"once applied", OnceResult(true), "applied"},
		{"once already done", OnceResult(false), "already done"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
