package main

import (
	"testing"
	"time"
)

func TestRequireLoopback(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:3000/webhooks/stripe", true},
		{"http://localhost:3000/webhooks/stripe", true},
		{"http://[::1]:3000/webhooks/stripe", true},
		{"http://127.0.0.2:3000/", true},
		{"https://hooks.example.com/webhooks/stripe", false},
		{"http://10.0.0.1:3000/", false},
		{"not a url", false},
	} {
		if err := requireLoopback(tc.url); (err == nil) != tc.ok {
			t.Errorf("requireLoopback(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

func TestPercentile(t *testing.T) {
	var xs []time.Duration
	for i := 1; i <= 100; i++ {
		xs = append(xs, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {95, 95 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}} {
		if got := percentile(xs, tc.p); got != tc.want {
			t.Errorf("percentile(1..100 ms, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("percentile of one = %v, want 7", got)
	}
}

func TestMakeDeliveriesRepeatsTheDuplicateShare(t *testing.T) {
	ds := makeDeliveries(200, 0.25, 0, "whsec_test")
	seen := map[string]bool{}
	dups := 0
	for _, d := range ds {
		if seen[string(d.body)] {
			dups++
		}
		seen[string(d.body)] = true
		if d.signature == "" {
			t.Fatal("a delivery is not signed")
		}
	}
	if len(ds) != 200 || dups != 50 {
		t.Errorf("%d deliveries, %d repeats; want 200 and 50", len(ds), dups)
	}
}
