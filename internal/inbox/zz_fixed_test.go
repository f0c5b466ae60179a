package inbox

import (
	"testing"
)

func BenchmarkZZFixed(b *testing.B) {
	for _, name := range []string{"stripe-1KiB", "stripe-checkout"} {
		raw := inlineBenchPayloads(b)[name]
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, len(raw))
			var p []byte
			for i := 0; i < b.N; i++ {
				p, _ = deflateFixed(buf, raw, len(raw))
			}
			b.ReportMetric(float64(len(p))/float64(len(raw)), "ratio")
		})
	}
}
