package provider

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/hookinbox/hookinbox/webhook"
)

// HMACSHA256 returns the HMAC-SHA256 of the concatenated parts under key.
func HMACSHA256(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// AnyEqual reports whether some candidate equals some wanted MAC, comparing
// every pair in constant time.
func AnyEqual(candidates, wanted [][]byte) bool {
	ok := false
	for _, w := range wanted {
		for _, c := range candidates {
			if hmac.Equal(c, w) {
				ok = true
			}
		}
	}
	return ok
}

// CheckSecretLen is CheckSecrets, and reports a secret shorter than min
// characters, saying which entry and why, never the secret. A list of
// secrets is split on commas (or given as a JSON array): a minimum keeps a
// secret that contains a comma from becoming shorter, guessable ones.
func CheckSecretLen(provider string, secrets []string, min int) error {
	if err := CheckSecrets(provider, secrets); err != nil {
		return err
	}
	for i, s := range secrets {
		if n := len([]rune(s)); n < min {
			return fmt.Errorf("%s verifier: secret %d is %d characters; %s secrets have at least %d "+
				"(a secret that contains a comma must be given as a JSON array: [\"...\"])", provider, i, n, provider, min)
		}
	}
	return nil
}

// CheckSecrets reports an empty secret list or an empty secret; the error
// names the provider, never a secret.
func CheckSecrets(provider string, secrets []string) error {
	if len(secrets) == 0 {
		return fmt.Errorf("%s verifier: no secret", provider)
	}
	for i, s := range secrets {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("%s verifier: secret %d is empty", provider, i)
		}
	}
	return nil
}

// CheckEventID checks an id the provider gave in a header or field, saying what
// is wrong without repeating what the sender wrote.
func CheckEventID(provider, what, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%s: no %s: %w", provider, what, ErrNoEventID)
	case len(id) > webhook.MaxEventIDLen:
		return fmt.Errorf("%s: %s is %d bytes, more than %d: %w", provider, what, len(id), webhook.MaxEventIDLen, ErrBadEventID)
	case webhook.ValidateEventID(id) != nil:
		return fmt.Errorf("%s: %s has characters other than letters, digits, '_' and '-': %w", provider, what, ErrBadEventID)
	}
	return nil
}

// CheckJSONObject reports a body that is not a JSON object as ErrNotJSON.
func CheckJSONObject(provider string, body []byte) error {
	trimmed := strings.TrimLeft(string(body[:min(len(body), 64)]), " \t\r\n")
	if trimmed == "" || trimmed[0] != '{' {
		return fmt.Errorf("%s: %d-byte body: %w", provider, len(body), ErrNotJSON)
	}
	return nil
}

// BodySignedBy reports whether sig is the HMAC-SHA256 of body under one of
// secrets, comparing in constant time: the check of a provider that signs
// the raw body with a shared secret.
func BodySignedBy(sig, body []byte, secrets []string) bool {
	want := make([][]byte, 0, len(secrets))
	for _, s := range secrets {
		want = append(want, HMACSHA256([]byte(s), body))
	}
	return AnyEqual([][]byte{sig}, want)
}
