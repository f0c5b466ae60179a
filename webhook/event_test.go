package webhook

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateEventID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{"stripe event", "evt_1NabcDEF23ghIJ", true},
		{"with dash", "evt-1_a", true},
		{"max length", strings.Repeat("a", MaxEventIDLen), true},
		{"empty", "", false},
		{"too long", strings.Repeat("a", MaxEventIDLen+1), false},
		{"key separator", "evt_1#x", false},
		{"path", "../etc", false},
		{"space", "evt 1", false},
		{"unicode", "evt_é", false},
		{"newline", "evt_1\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateEventID(tt.id)
			if got := err == nil; got != tt.ok {
				t.Fatalf("ValidateEventID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v is not ErrMalformed", err)
			}
		})
	}
}

func TestKey(t *testing.T) {
	k := Event{Provider: "stripe", ID: "evt_1"}.Key()
	if k != "stripe#evt_1" || k.Provider() != "stripe" || k.EventID() != "evt_1" {
		t.Errorf("key %q: provider %q id %q", k, k.Provider(), k.EventID())
	}
	for _, bad := range []string{"", "stripe", "#evt_1", "stripe#", "stripe#a/b"} {
		if _, err := ParseKey(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseKey(%q) error = %v, want ErrMalformed", bad, err)
		}
	}
	if got, err := ParseKey("stripe#evt_1"); err != nil || got != k {
		t.Errorf("ParseKey = %q, %v", got, err)
	}
}

func TestPermanent(t *testing.T) {
	base := errors.New("unknown price")
	p := Permanent(base)
	if !IsPermanent(p) || !errors.Is(p, base) || p.Error() != "unknown price" {
		t.Errorf("Permanent(%v) = %v: IsPermanent %v, keeps cause %v", base, p, IsPermanent(p), errors.Is(p, base))
	}
	if Permanent(nil) != nil {
		t.Error("Permanent(nil) != nil")
	}
	if IsPermanent(base) || IsPermanent(errors.New("timeout")) {
		t.Error("a plain error is permanent")
	}
	if !IsPermanent(ErrMalformed) {
		t.Error("ErrMalformed is not permanent")
	}
}
