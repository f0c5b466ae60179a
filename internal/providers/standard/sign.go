package standard

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
)

// Headers returns the Standard Webhooks headers for body sent as message
// id at at, with one signature of "<id>.<unix>.<body>" per secret,
// space-separated, as a sender does while rotating: "v1,<base64 HMAC>"
// for a "whsec_<base64>" secret, "v1a,<base64 ed25519 signature>" for a
// "whsk_<base64>" private key (its 32-byte seed, or the 64-byte key).
// A "whpk_" public key verifies but cannot sign: it is skipped, so a
// receiver's own list of secrets signs what it accepts. It panics on a
// secret that is not base64: a test's own mistake (Sign reports it).
func Headers(body []byte, id string, at time.Time, secrets ...string) map[string]string {
	h, err := headers(id, at, secrets, body)
	if err != nil {
		panic(err)
	}
	return h
}

// SignedHeaders is Headers for a sender whose secrets come from its
// configuration, with the body given in parts (their concatenation is
// signed): a secret that is not base64 is an error, naming no secret,
// instead of a panic. A v1 HMAC is computed over the parts in turn, so a
// large body is never copied; a v1a (whsk_) signature needs the whole
// message, and joins them. hookinbox's destinations sign with it.
func SignedHeaders(id string, at time.Time, secrets []string, body ...[]byte) (map[string]string, error) {
	return headers(id, at, secrets, body...)
}

func headers(id string, at time.Time, secrets []string, body ...[]byte) (map[string]string, error) {
	ts := strconv.FormatInt(at.Unix(), 10)
	signed := append([][]byte{[]byte(id + "." + ts + ".")}, body...)
	var sigs []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "whpk_") {
			continue
		}
		if seed, ok := strings.CutPrefix(s, "whsk_"); ok {
			key, err := privateKey(seed)
			if err != nil {
				return nil, err
			}
			sigs = append(sigs, "v1a,"+base64.StdEncoding.EncodeToString(ed25519.Sign(key, bytes.Join(signed, nil))))
			continue
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			return nil, fmt.Errorf("standard: a whsec_ secret is not base64")
		}
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(provider.HMACSHA256(key, signed...)))
	}
	return map[string]string{
		"content-type":      "application/json",
		"webhook-id":        id,
		"webhook-timestamp": ts,
		"webhook-signature": strings.Join(sigs, " "),
	}, nil
}

// privateKeyOf returns the ed25519 private key of a Standard Webhooks
// "whsk_<base64>" signing key (the prefix may be left off): a 32-byte
// seed, as the specification's reference libraries hold it, or the
// 64-byte private key. It panics on anything else.
func privateKeyOf(whsk string) ed25519.PrivateKey {
	k, err := privateKey(whsk)
	if err != nil {
		panic(err)
	}
	return k
}

func privateKey(whsk string) (ed25519.PrivateKey, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whsk, "whsk_"))
	switch {
	case err == nil && len(k) == ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(k), nil
	case err == nil && len(k) == ed25519.PrivateKeySize:
		return ed25519.PrivateKey(k), nil
	}
	return nil, fmt.Errorf("standard: whsk_ key is not a base64 %d-byte seed or %d-byte key", ed25519.SeedSize, ed25519.PrivateKeySize)
}

// PublicKey returns the "whpk_<base64>" public key of a "whsk_" signing
// key, the secret a receiver verifies its v1a signatures with.
func PublicKey(whsk string) string {
	return "whpk_" + base64.StdEncoding.EncodeToString(privateKeyOf(whsk).Public().(ed25519.PublicKey))
}
