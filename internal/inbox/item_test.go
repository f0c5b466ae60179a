package inbox

import (
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

func TestPayloadItemMarksTheClaim(t *testing.T) {
	c := Claim{
		Event: webhook.Event{Provider: "stripe", ID: "evt_1", Raw: []byte("{}")},
		At:    time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.FixedZone("CET", 3600)),
		TTL:   time.Hour + 500*time.Millisecond,
	}
	got, want := c.PayloadItem(), c.NewItem()
	if got.Key != want.Key || !got.ReceivedAt.Equal(want.ReceivedAt) || formatTime(got.ReceivedAt) != formatTime(want.ReceivedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("PayloadItem = %+v, want the Key, ReceivedAt and ExpiresAt of %+v", got, want)
	}
}

func TestInlineChoiceDependsOnTheEventOnly(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		raw    []byte
		inline bool
	}{
		{"GoPay notification", []byte(`{"id":3000006529}`), true},
		{"small JSON", []byte(`{"id":"evt_1","object":"event","type":"customer.created"}`), true},
		{"incompressible, fits as it is", incompressible(400), true},
		{"1 KiB of JSON", []byte(`{"padding":"` + strings.Repeat("ab", 505) + `"}`), true},
		{"over InlineMaxRaw however compressible", []byte(strings.Repeat(" ", InlineMaxRaw+1)), false},
		{"under InlineMaxRaw but too large compressed", incompressible(4 << 10), false},
		{"empty", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := webhook.Event{Provider: "stripe", ID: "evt_1QbXq2Lkdfj3Sdfo8Rt2VbNm", Type: "customer.created", Raw: tc.raw}
			// received_at loses trailing zeros: the clock must not change
			// the choice, nor preparing the claim.
			for _, ns := range []int{0, 1, 120_000_000, 123_456_789} {
				c := Claim{Event: ev, At: at.Add(time.Duration(ns)), TTL: DefaultTTL}
				if got := c.Inline(); got != tc.inline {
					t.Errorf("Inline() at %d ns = %v, want %v", ns, got, tc.inline)
				}
				p := c.Prepared()
				it := p.NewItem()
				if got := p.Inline(); got != tc.inline || (it.Payload != nil) != tc.inline {
					t.Errorf("prepared at %d ns: Inline() = %v, NewItem().Payload %d bytes; want %v", ns, got, len(it.Payload), tc.inline)
				}
				if !tc.inline || p.packed == nil {
					continue
				}
				raw, err := inflate(p.packed)
				if err != nil || string(raw) != string(tc.raw) {
					t.Errorf("inflate(packed) = %d bytes, %v; want the payload back", len(raw), err)
				}
			}
		})
	}
}

func TestInflateRefusesAPayloadOverInlineMaxRaw(t *testing.T) {
	packed, ok := deflate([]byte(strings.Repeat("x", InlineMaxRaw+1)), 1<<20)
	if !ok {
		t.Fatal("deflate failed")
	}
	if _, err := inflate(packed); err == nil {
		t.Error("inflate of a payload over InlineMaxRaw: no error")
	}
	if _, err := inflate([]byte("not deflate")); err == nil {
		t.Error("inflate of garbage: no error")
	}
}

// TestTimesReadInEveryForm: the times an item holds are written with
// nine fractional digits always, and read so, or as earlier versions
// wrote them (RFC 3339, its trailing zeros cut).
func TestTimesReadInEveryForm(t *testing.T) {
	on := time.Date(2026, 11, 30, 12, 0, 5, 0, time.UTC)
	for text, want := range map[string]time.Time{
		"2026-11-30T12:00:05Z":           on,
		"2026-11-30T12:00:05.9Z":         on.Add(900 * time.Millisecond),
		"2026-11-30T12:00:05.000000000Z": on,
		"2026-11-30T12:00:05.900000000Z": on.Add(900 * time.Millisecond),
	} {
		it, err := unmarshal(attrs{"pk": str("stripe#evt_1"), "received_at": str(text), "processed_at": str(text)})
		if err != nil || !it.ReceivedAt.Equal(want) || !it.ProcessedAt.Equal(want) {
			t.Errorf("%s read as %v, %v, %v; want %v", text, it.ReceivedAt, it.ProcessedAt, err, want)
		}
	}
	for _, at := range []time.Time{on, on.Add(900 * time.Millisecond), on.Add(time.Nanosecond)} {
		if got := formatTime(at); len(got) != len("2026-11-30T12:00:05.000000000Z") {
			t.Errorf("formatTime(%v) = %q; want nine fractional digits", at, got)
		}
	}
	if formatTime(on) >= formatTime(on.Add(900*time.Millisecond)) {
		t.Errorf("%q sorts after %q", formatTime(on), formatTime(on.Add(900*time.Millisecond)))
	}
}
