package inbox

import (
	"bytes"
	"compress/gzip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// inlineBenchPayloads are what the benchmarks compress: a GoPay
// notification (113 B: it fits as it is), a 1 KiB Stripe event and a
// Shopify order (866 B), both compressed, and a Stripe checkout (2.9 KB,
// too large to ride inline: not compressed).
func inlineBenchPayloads(b *testing.B) map[string][]byte {
	b.Helper()
	shopify, err := os.ReadFile("../../testdata/shopify/orders_create.json")
	if err != nil {
		b.Fatal(err)
	}
	checkout, err := os.ReadFile("../../testdata/stripe/checkout.session.completed.json")
	if err != nil {
		b.Fatal(err)
	}
	gopay, err := os.ReadFile("../../testdata/gopay/payment.PAID.json")
	if err != nil {
		b.Fatal(err)
	}
	return map[string][]byte{
		"stripe-1KiB":     verifytest.StripeEvent("customer.created", "evt_1QbXq2Lkdfj3Sdfo8Rt2VbNm", time.Unix(1764500000, 0), verifytest.WithSize(1<<10)),
		"shopify-866B":    shopify,
		"stripe-checkout": checkout,
		"gopay-113B":      gopay,
	}
}

// BenchmarkInlineClaim is the receiver's added work for a claim: compress
// the payload once and decide whether it rides inline (Claim.Prepared).
func BenchmarkInlineClaim(b *testing.B) {
	for _, name := range []string{"gopay-113B", "stripe-1KiB", "shopify-866B", "stripe-checkout"} {
		raw := inlineBenchPayloads(b)[name]
		ev := webhook.Event{Provider: "stripe", ID: "evt_1QbXq2Lkdfj3Sdfo8Rt2VbNm", Type: "customer.created", Raw: raw}
		at := time.Now()
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for i := 0; i < b.N; i++ {
				_ = Claim{Event: ev, At: at, TTL: DefaultTTL}.Prepared()
			}
		})
	}
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// BenchmarkCompress compares the two encodings the inline payload could
// use, both pooled at BestSpeed: raw DEFLATE (what the inbox stores) and
// gzip (DEFLATE plus a header and a CRC-32, 18 bytes more).
func BenchmarkCompress(b *testing.B) {
	raw := inlineBenchPayloads(b)["stripe-1KiB"]
	b.Run("flate", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			if _, ok := deflate(raw, 4096); !ok {
				b.Fatal("deflate failed")
			}
		}
	})
	b.Run("gzip", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		var buf bytes.Buffer
		for i := 0; i < b.N; i++ {
			buf.Reset()
			w := gzipWriters.Get().(*gzip.Writer)
			w.Reset(&buf)
			if _, err := w.Write(raw); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			gzipWriters.Put(w)
		}
	})
	b.Run("inflate", func(b *testing.B) {
		packed, _ := deflate(raw, 4096)
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			if _, err := inflate(packed); err != nil {
				b.Fatal(err)
			}
		}
	})
}
