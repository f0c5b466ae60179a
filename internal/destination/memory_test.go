package destination_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/webhook"
)

// BenchmarkProcessorPeakMemory runs the largest batch the processor
// takes at once: 10 events whose bodies are the largest the receiver
// accepts (about 6 MB each, kept in S3), delivered to two destinations
// that read every byte, each taking all 10 at once, by the real
// processor bootstrap under
// aws-lambda-rie, in one invocation. It reports the bootstrap's peak
// resident memory (peak-MB, VmHWM) beside the template's MemorySize for
// the processor (memory-size-MB) and their ratio (of-memory-size).
//
//	go test -run '^$' -bench ProcessorPeakMemory -benchtime 1x -count 3 ./internal/destination/
func BenchmarkProcessorPeakMemory(b *testing.B) {
	// Bodies of plain text, and of text json.Marshal would escape
	// ("<", ">", "&" grow to six bytes each when re-encoded).
	for name, filler := range map[string]string{"plain": "abcdef", "html": "<&> é"} {
		b.Run(name, func(b *testing.B) { peakMemory(b, filler) })
	}
}

func peakMemory(b *testing.B, filler string) {
	const batch = 10
	var got atomic.Int64 // bytes the destinations read
	discard := func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Add(n)
	}
	a, c := httptest.NewServer(http.HandlerFunc(discard)), httptest.NewServer(http.HandlerFunc(discard))
	b.Cleanup(a.Close)
	b.Cleanup(c.Close)
	var peak, memorySize float64
	for i := range b.N {
		p := withDestinations(b, []destination.Config{
			{Name: "one", URL: a.URL, Events: []string{"*"}, Secret: sinkSecretARN, Concurrency: batch},
			{Name: "two", URL: c.URL, Events: []string{"*"}, Secret: sinkSecretARN, Concurrency: batch},
		})
		spec, err := p.Stack.Function("ProcessorFunction")
		if err != nil {
			b.Fatal(err)
		}
		memorySize = float64(spec.Memory)
		var keys []webhook.Key
		for n := range batch {
			head := fmt.Sprintf(`{"type":"invoice.paid","n":%d,"lines":"`, n)
			body := head + strings.Repeat(filler, (receiver.DefaultMaxBodyBytes-len(head)-2)/len(filler)) + `"}`
			keys = append(keys, sendStandardBody(b, p, fmt.Sprintf("msg_mem_%d_%d", i, n), []byte(body)))
		}
		fn := p.ProcessWithBootstrap(b, nil)
		got.Store(0)
		if n, err := p.Source.PollOnce(context.Background()); err != nil || n != batch {
			b.Fatalf("one batch of %d: %d messages, %v", batch, n, err)
		}
		if !p.AllIn(b, keys, inbox.Done) || got.Load() < int64(2*batch*6_000_000) {
			b.Fatalf("after the batch: all DONE %v, %d bytes delivered; want every event DONE, about 125 MB delivered\n%s", p.AllIn(b, keys, inbox.Done), got.Load(), p.Logs.String())
		}
		rss, err := fn.RuntimePeakRSS()
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, float64(rss)/(1<<20))
		_ = fn.Stop()
	}
	b.ReportMetric(peak, "peak-MB")
	b.ReportMetric(memorySize, "memory-size-MB")
	b.ReportMetric(peak/memorySize, "of-memory-size")
	b.ReportMetric(0, "ns/op")
}
