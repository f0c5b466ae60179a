package intake

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestWhenThePayloadIsWritten: beside the claim for a payload item,
// after it for an S3 object once the claim is won or for a duplicate
// whose event may lack it, never for one that rides inline.
func TestWhenThePayloadIsWritten(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	claimOf := func(n int) inbox.Claim {
		// Random-looking bytes do not compress: n bytes are n bytes.
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(inbox.PayloadSHA256([]byte{byte(i), byte(i >> 8), byte(i >> 16)}))
		}
		raw := `{"id":"evt_1","x":"` + b.String()[:n] + `"}`
		return inbox.Claim{Event: webhook.Event{Provider: "stripe", ID: "evt_1", Raw: []byte(raw)}, At: at, TTL: time.Hour}.Prepared()
	}
	inline, item, external := claimOf(100), claimOf(64<<10), claimOf(inbox.MaxPayloadBytes+1)
	if !inline.Inline() || item.Inline() || item.External() || !external.External() {
		t.Fatal("the claims are not inline, a payload item and external")
	}
	dup := inbox.ErrAlreadyClaimed
	lacking := inbox.Item{Status: inbox.Failed}
	tests := []struct {
		name          string
		c             inbox.Claim
		it            inbox.Item
		err           error
		beside, after bool
	}{
		{name: "inline: with the claim", c: inline},
		{name: "inline duplicate, its payload stored", c: inline, it: inbox.Item{Status: inbox.Failed, Payload: []byte("{}")}, err: dup},
		{name: "inline duplicate that may lack it", c: inline, it: lacking, err: dup, after: true},
		{name: "payload item: beside", c: item, beside: true},
		{name: "external, claim won: after", c: external, after: true},
		{name: "external, claim failed: never", c: external, err: errors.New("throttled")},
		{name: "external duplicate, its object named", c: external, it: external.NewItem(), err: dup, after: true},
		{name: "external duplicate, finished", c: external, it: inbox.Item{Status: inbox.Done}, err: dup},
	}
	for _, tt := range tests {
		beside := besideClaim(tt.c)
		after := !beside && afterClaim(tt.c, tt.it, tt.err)
		if beside != tt.beside || after != tt.after {
			t.Errorf("%s: beside %v, after %v; want %v, %v", tt.name, beside, after, tt.beside, tt.after)
		}
	}
}
