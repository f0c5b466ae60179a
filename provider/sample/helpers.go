package sample

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
)

// UUID returns a random version-4 UUID, as GitHub and Shopify id their
// deliveries: a signer's fresh id.
func UUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// FirstSecret returns the first of secrets, or an error naming the
// provider when there is none: what a signer that signs with one secret
// checks first.
func FirstSecret(provider string, secrets []string) (string, error) {
	for _, s := range secrets {
		if s = strings.TrimSpace(s); s != "" {
			return s, nil
		}
	}
	return "", fmt.Errorf("%s: no signing secret", provider)
}

// Token returns 24 random letters and digits, as in Stripe's ids: a
// signer's fresh id after its prefix ("msg_"+Token()).
func Token() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Digits returns n random decimal digits, the first not 0: a sample's
// fresh numeric id (a GoPay payment, an Adyen pspReference).
func Digits(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	if n > 0 && b[0] == '0' {
		b[0] = '7'
	}
	return string(b)
}

// FreshID returns a new random id with id's prefix, up to its last '_':
// "in_1QNA2n..." gives "in_" and Token(). A sample's fresh id.
func FreshID(id string) string {
	return id[:strings.LastIndex(id, "_")+1] + Token()
}

// ReplaceString returns the JSON body with every string old (quoted)
// replaced by repl: a sample's id changed everywhere it appears.
func ReplaceString(body []byte, old, repl string) []byte {
	return bytes.ReplaceAll(body, []byte(strconv.Quote(old)), []byte(strconv.Quote(repl)))
}
