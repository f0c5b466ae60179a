package shopify

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
)

// Sample implements provider.Sampler: the event id ev.ID or a fresh
// one, the topic ev.Type or the file's name (orders_paid: orders/paid),
// and, when ev.Fresh, a fresh order ID. A paid order's orders/paid is
// keyed by the order, whatever its event id: its ID is order-<id>-paid.
func (Provider) Sample(ev provider.TestEvent) (provider.TestEvent, error) {
	if ev.Type = topic(ev); ev.Type == "" {
		return ev, fmt.Errorf("shopify: no topic")
	}
	if ev.ID == "" {
		ev.ID = provider.UUID()
	}
	if ev.Fresh {
		var order struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(ev.Body, &order); err != nil || order.ID == "" {
			return ev, fmt.Errorf("shopify: fresh order ID: not an order with an id: %v", err)
		}
		var n [8]byte
		_, _ = rand.Read(n[:])
		id := 1_000_000_000_000 + int64(binary.BigEndian.Uint64(n[:])%9_000_000_000_000) // 13 digits, as Shopify's
		ev.Body = bytes.ReplaceAll(ev.Body, []byte(order.ID.String()), []byte(strconv.FormatInt(id, 10)))
	}
	if paid := paidOrderID(ev.Type, ev.Body); paid != "" {
		ev.ID = paid
	}
	return ev, nil
}

// topic is ev's topic: ev.Type, or the file's name with / for its first _.
func topic(ev provider.TestEvent) string {
	if ev.Type != "" {
		return ev.Type
	}
	return strings.Replace(strings.TrimSuffix(ev.File, ".json"), "_", "/", 1)
}
