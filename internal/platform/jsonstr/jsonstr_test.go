package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// samples need every kind of escape, and none.
var samples = []string{
	"", "plain", "checkout.session.completed", "stripe#evt_1NwH2aLkdIwHu7ix",
	`q"uo\te`, "tab\there\nnl\r\b\f\x00\x1f\x7f", "<a href='x'>&amp;</a>",
	"line\u2028sep\u2029", "bad\xffutf8\xc3", "\xed\xa0\x80 surrogate", "ünïcödé € 𝄞",
	strings.Repeat("x", 300) + "\"",
}

// TestAppendWritesWhatEncodingJSONWrites holds Append to encoding/json,
// byte for byte, and shows it appends: what b held stays.
func TestAppendWritesWhatEncodingJSONWrites(t *testing.T) {
	for _, s := range samples {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := Append([]byte("prefix:"), s)
		if !bytes.Equal(got, append([]byte("prefix:"), want...)) {
			t.Errorf("Append(%q) = %s, want prefix:%s", s, got, want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); !bytes.Equal(got, want) {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
		var back string
		if err := json.Unmarshal(Append(nil, s), &back); err != nil {
			t.Fatalf("Append(%q) is not a JSON string: %v", s, err)
		}
	})
}

func BenchmarkAppend(b *testing.B) {
	const s = "checkout.session.completed"
	buf := make([]byte, 0, 64)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = Append(buf[:0], s)
	}
}
