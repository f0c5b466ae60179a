package verifytest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
)

// FreshStripe returns the options that give the Stripe event body an
// object of its own: a fresh ID for its object, and for the payment
// intent, charge, invoice and subscription it names (the same prefix, new
// letters), as a new event about a new object has in a real account. A
// later option (WithSubscription, WithObjectID) still sets its own.
func FreshStripe(body []byte) ([]Option, error) {
	var ev struct {
		Data struct {
			Object map[string]any `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Data.Object == nil {
		return nil, fmt.Errorf("fresh IDs: not a Stripe event with a data.object: %v", err)
	}
	obj := ev.Data.Object
	var opts []Option
	if id, _ := obj["id"].(string); id != "" && obj["object"] != "customer" {
		opts = append(opts, WithObjectID(freshLike(id)))
	}
	for _, field := range []string{"payment_intent", "charge", "latest_charge", "latest_invoice"} {
		if id, _ := obj[field].(string); id != "" {
			opts = append(opts, WithRelated(field, freshLike(id)))
		}
	}
	if id, _ := obj["subscription"].(string); id != "" {
		opts = append(opts, WithSubscription(freshLike(id), ""))
	}
	return opts, nil
}

// freshLike returns a new random ID with id's prefix: "in_1QNA2n..." gives
// "in_" and 24 random letters and digits.
func freshLike(id string) string {
	prefix := id[:strings.LastIndex(id, "_")+1]
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}
