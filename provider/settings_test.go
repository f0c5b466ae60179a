package provider

import (
	"fmt"
	"testing"
	"time"
)

func TestReaderReportsEverythingAtOnce(t *testing.T) {
	env := map[string]string{"TOL": "soon", "MAX": "-1", "LIST": " a, ,b ,", "D": "90", "D2": "2m"}
	r := (&Env{Getenv: func(k string) string { return env[k] }}).Settings()
	r.Required("B_TABLE")
	r.Required("A_QUEUE")
	if got := r.Duration("TOL", time.Minute); got != time.Minute {
		t.Errorf("Duration(bad) = %v, want the default", got)
	}
	if got := r.Int("MAX", 7); got != 7 {
		t.Errorf("Int(bad) = %d, want the default", got)
	}
	if got := r.Duration("D", 0); got != 90*time.Second {
		t.Errorf("Duration(90) = %v, want 90s", got)
	}
	if got := r.Duration("D2", 0); got != 2*time.Minute {
		t.Errorf("Duration(2m) = %v, want 2m", got)
	}
	if got := r.List("LIST"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("List = %q, want [a b]", got)
	}
	got := r.Err()
	want := `configuration: missing A_QUEUE, B_TABLE; TOL="soon" is not a positive duration like 300s; MAX="-1" is not a positive integer`
	if got == nil || got.Error() != want {
		t.Errorf("Err() = %v\nwant %s", got, want)
	}
}

func TestReaderNoErrorWhenComplete(t *testing.T) {
	r := (&Env{Getenv: func(string) string { return "x" }}).Settings()
	r.Required("A")
	if err := r.Err(); err != nil {
		t.Errorf("Err() = %v, want nil", err)
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"blank", "  ", nil},
		{"one", "whsec_a", []string{"whsec_a"}},
		{"two", "whsec_a,whsec_b", []string{"whsec_a", "whsec_b"}},
		{"spaces and empties", " whsec_a , ,, whsec_b ,", []string{"whsec_a", "whsec_b"}},
		{"commas only", ",,,", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := split(tc.in)
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
				t.Errorf("split(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
