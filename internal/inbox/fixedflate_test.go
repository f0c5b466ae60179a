package inbox

import (
	"bytes"
	"compress/flate"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inflateAll is compress/flate's reading of packed, unbounded.
func inflateAll(t testing.TB, packed []byte) []byte {
	t.Helper()
	got, err := io.ReadAll(flate.NewReader(bytes.NewReader(packed)))
	if err != nil {
		t.Fatalf("compress/flate cannot read the block: %v", err)
	}
	return got
}

// checkFixed compresses src without a limit and checks that compress/flate
// reads back src, returning the compressed size.
func checkFixed(t testing.TB, src []byte) int {
	t.Helper()
	packed, ok := deflateFixed(nil, src, 1<<20)
	if !ok {
		t.Fatalf("deflateFixed refused %d bytes", len(src))
	}
	if got := inflateAll(t, packed); !bytes.Equal(got, src) {
		t.Fatalf("round trip of %d bytes gave %d different bytes", len(src), len(got))
	}
	return len(packed)
}

func TestDeflateFixedProviderPayloads(t *testing.T) {
	files, err := filepath.Glob("../../testdata/*/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("testdata payloads: %d files, %v", len(files), err)
	}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		n := checkFixed(t, raw)
		// Provider JSON repeats its keys: the fixed codes must still
		// pack it well under its raw size.
		if len(raw) > 1000 && n > len(raw)*7/10 {
			t.Errorf("%s: %d bytes packed into %d, over 0.7 of it", name, len(raw), n)
		}
	}
}

func TestDeflateFixedEdges(t *testing.T) {
	random := make([]byte, 5000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	// far repeats a block at the far end of the window.
	block := random[:300]
	far := append(append(append([]byte{}, block...), bytes.Repeat([]byte{'.'}, maxFixedInput-2*len(block))...), block...)
	for name, src := range map[string][]byte{
		"empty":         {},
		"one byte":      {0xff},
		"three bytes":   []byte("abc"),
		"four repeated": []byte("abcdabcdabcd"),
		"long run":      bytes.Repeat([]byte{'a'}, 10000), // distance 1, matches of 258
		"every byte": func() []byte {
			b := make([]byte, 512)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}(),
		"random":       random,
		"window's end": far,
		"lengths":      []byte(strings.Repeat("0123456789", 3) + strings.Repeat("x", 259) + "0123456789" + strings.Repeat("y", 260) + strings.Repeat("0123456789", 30)),
	} {
		t.Run(name, func(t *testing.T) { checkFixed(t, src) })
	}
	if _, ok := deflateFixed(nil, make([]byte, maxFixedInput+1), 1<<20); ok {
		t.Errorf("deflateFixed took %d bytes, over maxFixedInput", maxFixedInput+1)
	}
}

// A limit the block passes is refused, whole; one it meets is kept.
func TestDeflateFixedLimit(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/stripe/checkout.session.completed.json")
	if err != nil {
		t.Fatal(err)
	}
	n := checkFixed(t, raw)
	if packed, ok := deflateFixed(nil, raw, n); !ok || len(packed) != n {
		t.Errorf("limit %d (its size): ok %v, %d bytes", n, ok, len(packed))
	}
	for _, limit := range []int{n - 1, n / 2, 0} {
		if packed, ok := deflateFixed(nil, raw, limit); ok || packed != nil {
			t.Errorf("limit %d under its size %d: ok %v, %d bytes", limit, n, ok, len(packed))
		}
	}
}

// deflate takes the fixed codes when they fit and flate's dynamic ones
// when only those do; both read back.
func TestDeflateFallsBackToDynamicCodes(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/stripe/checkout.session.completed.json")
	if err != nil {
		t.Fatal(err)
	}
	fixed := checkFixed(t, raw)
	for _, limit := range []int{fixed, fixed - 1} {
		packed, ok := deflate(raw, limit)
		if !ok {
			t.Fatalf("limit %d: deflate refused a payload flate packs in less", limit)
		}
		if len(packed) > limit {
			t.Errorf("limit %d: %d bytes", limit, len(packed))
		}
		if got := inflateAll(t, packed); !bytes.Equal(got, raw) {
			t.Errorf("limit %d: round trip differs", limit)
		}
	}
}

func FuzzDeflateFixed(f *testing.F) {
	f.Add([]byte(`{"id":"evt_1","object":"event","data":{"object":{"id":"cus_1","object":"customer"}}}`))
	f.Add(bytes.Repeat([]byte("ab"), 300))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > maxFixedInput {
			return
		}
		checkFixed(t, src)
	})
}

// BenchmarkDeflate compares the two encoders deflate chooses between on
// the payloads an inline claim compresses; ratio is packed/raw.
func BenchmarkDeflate(b *testing.B) {
	for _, name := range []string{"stripe-1KiB", "shopify-866B", "stripe-checkout"} {
		raw := inlineBenchPayloads(b)[name]
		for _, enc := range []struct {
			name string
			pack func([]byte) []byte
		}{
			{"fixed", func(raw []byte) []byte { p, _ := deflateFixed(make([]byte, 0, len(raw)), raw, len(raw)); return p }},
			{"flate", func(raw []byte) []byte {
				var buf bytes.Buffer
				w := flateWriters.Get().(*flate.Writer)
				w.Reset(&buf)
				_, _ = w.Write(raw)
				_ = w.Close()
				flateWriters.Put(w)
				return buf.Bytes()
			}},
		} {
			b.Run(name+"/"+enc.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(raw)))
				var packed []byte
				for i := 0; i < b.N; i++ {
					packed = enc.pack(raw)
				}
				b.ReportMetric(float64(len(packed))/float64(len(raw)), "ratio")
			})
		}
	}
}
