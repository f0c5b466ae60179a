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
// notification (113 B), a 1 KiB Stripe event, a Shopify order (866 B)
// and a Stripe checkout (2.9 KB: it fits a two-unit claim).
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

// BenchmarkCompress compares the inbox's raw DEFLATE (deflate: the fixed
// codes for a 1 KiB event) with gzip at BestSpeed (compress/flate's
// dynamic codes plus a header and a CRC-32, 18 bytes more), and measures
// inflating it.
func BenchmarkCompress(b *testing.B) {
	raw := inlineBenchPayloads(b)["stripe-1KiB"]
	b.Run("deflate", func(b *testing.B) {
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
