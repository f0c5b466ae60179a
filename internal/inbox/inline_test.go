package inbox

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestTestdataPayloadsInline counts the payloads of testdata/ (one
// directory per provider) that ride in their claim, each under the key
// and type its provider gives it (docs/performance.md, "Inline
// payloads").
func TestTestdataPayloadsInline(t *testing.T) {
	ids := map[string]string{
		"adyen": "8515228466811329-AUTHORISATION", "github": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
		"gopay": "3000006529", "mollie": "tr_WDqYK6vllg", "paddle": "evt_01hv8wptq8987qeep44cyrewp9",
		"shopify": "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043", "standard": "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W",
		"stripe": "evt_1QbXq2Lkdfj3Sdfo8Rt2VbNm",
	}
	files, err := filepath.Glob("../../testdata/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var inline, apart []string
	for _, f := range files {
		provider, name := filepath.Base(filepath.Dir(f)), strings.TrimSuffix(filepath.Base(f), ".json")
		id, ok := ids[provider]
		if !ok {
			continue // not a provider's payload
		}
		if name == "orders_paid" {
			id = "order-820982911946154508-paid" // a paid order is keyed by the order
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ev := webhook.Event{Provider: provider, ID: id, Type: strings.Replace(name, "_", "/", 1), Raw: raw}
		if (Claim{Event: ev, At: at, TTL: DefaultTTL}).Inline() {
			inline = append(inline, provider+"/"+name)
		} else {
			apart = append(apart, fmt.Sprintf("%s/%s (%d B)", provider, name, len(raw)))
		}
	}
	t.Logf("%d of %d payloads ride inline; their own item: %s", len(inline), len(inline)+len(apart), strings.Join(apart, ", "))
	if len(inline) != 14 || len(inline)+len(apart) != 22 {
		t.Errorf("%d of %d inline; docs/performance.md says 14 of 22", len(inline), len(inline)+len(apart))
	}
}
