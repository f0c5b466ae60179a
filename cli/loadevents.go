package cli

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// maxLoadSample bounds the sample event load sends without --size: a
// realistic delivery, not the largest the provider ever sends.
const maxLoadSample = 4 << 10

// loadSource makes a provider's deliveries for load: its sample event
// with a fresh event id each, signed as the provider signs it.
type loadSource struct {
	p       provider.Provider
	secrets []string
	body    []byte
	file    string // the sample's base name: the type, for a provider that sends it beside the body
	// base is the sample's event id, made fresh in TestEvent.ID; or,
	// when inBody, the part of it the provider reads from the body (all
	// of it, or a '-'-separated head, for an id made of a reference and
	// a type), replaced there.
	base   string
	inBody bool
	run    uint64 // tells one run's ids from another's
}

// newLoadSource reads p's sample events in root/testdata/<name>/ and takes
// the largest no bigger than size (0: maxLoadSample), padded to size.
// It fails for a provider whose events it cannot give fresh ids.
func newLoadSource(root string, p provider.Provider, size int, secrets []string) (*loadSource, error) {
	file, body, err := loadSample(filepath.Join(root, "testdata", p.Name()), size)
	if err != nil {
		return nil, err
	}
	s := &loadSource{p: p, secrets: secrets, body: body, file: filepath.Base(file), run: rand.Uint64()}
	id, err := s.eventID(provider.TestEvent{Body: body, File: s.file})
	if err != nil {
		return nil, err
	}
	s.base = id
	if got, err := s.eventID(s.event(0)); err == nil && got == s.freshID(0) {
		return s, nil
	}
	s.inBody = true
	for head := id; head != ""; head, _ = cutLast(head, "-") {
		if s.base = head; bytes.Contains(body, []byte(`"`+head+`"`)) {
			break
		}
	}
	if got, err := s.eventID(s.event(0)); err != nil || got != s.freshID(0)+id[len(s.base):] {
		return nil, fmt.Errorf("load cannot give %s's events fresh ids: its sample's id %s is neither its TestEvent.ID nor in its body", p.Name(), id)
	}
	return s, nil
}

// cutLast slices s around the last sep.
func cutLast(s, sep string) (before, after string) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):]
	}
	return "", s
}

// loadSample returns the largest JSON file in dir no bigger than size
// (0: maxLoadSample), padded to size, and its name.
func loadSample(dir string, size int) (string, []byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return "", nil, fmt.Errorf("load sends the provider's sample events, and %s has none", dir)
	}
	limit := size
	if limit == 0 || limit > maxLoadSample {
		limit = maxLoadSample
	}
	var best []byte
	name := ""
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", nil, err
		}
		if len(b) <= limit && len(b) > len(best) {
			name, best = f, b
		}
	}
	if best == nil {
		return "", nil, usagef("--size %d: every sample event in %s is larger", size, dir)
	}
	if size > 0 {
		best, err = padJSON(best, size)
	}
	return name, best, err
}

// padJSON returns the JSON object body with a member that makes it size
// bytes long.
func padJSON(body []byte, size int) ([]byte, error) {
	const member = `"hookinbox_load_padding":"",`
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(body), []byte("{"))
	if !ok {
		return nil, fmt.Errorf("--size pads a JSON object, and the sample event is not one")
	}
	n := size - len(rest) - len("{") - len(member)
	if n < 0 {
		return nil, usagef("--size %d: the sample event is %d bytes", size, len(body))
	}
	return fmt.Appendf(nil, `{"hookinbox_load_padding":"%s",%s`, strings.Repeat("x", n), rest), nil
}

// freshID returns the i-th fresh id of the run: the sample's with its
// last digits replaced by the run's and i's (digits fit every id).
func (s *loadSource) freshID(i int) string {
	digits := fmt.Sprintf("%05d%07d", s.run%100_000, i%10_000_000)
	k := min(len(digits), len(s.base)-1)
	return s.base[:len(s.base)-k] + digits[len(digits)-k:]
}

// event returns the i-th fresh event.
func (s *loadSource) event(i int) provider.TestEvent {
	id := s.freshID(i)
	if s.inBody {
		return provider.TestEvent{Body: bytes.ReplaceAll(s.body, []byte(`"`+s.base+`"`), []byte(`"`+id+`"`)), File: s.file}
	}
	return provider.TestEvent{ID: id, Body: s.body, File: s.file}
}

// eventID returns the id the provider's verifier reads in ev's delivery.
func (s *loadSource) eventID(ev provider.TestEvent) (string, error) {
	req, err := s.p.Sign(ev, s.secrets, time.Now())
	if err != nil {
		return "", fmt.Errorf("sign a %s delivery: %w", s.p.Name(), err)
	}
	secrets := s.secrets
	if s.p.Webhook().Unsigned {
		secrets = nil
	}
	v, err := s.p.Verifier(secrets, &provider.Env{})
	if err != nil {
		return "", fmt.Errorf("verify a %s delivery: %w", s.p.Name(), err)
	}
	evs, err := v.Verify(context.Background(), req)
	if err != nil || len(evs) == 0 {
		return "", fmt.Errorf("a %s delivery load signed does not verify: %v", s.p.Name(), err)
	}
	return evs[0].Key().EventID(), nil
}

// deliveries returns n deliveries of fresh events, a share dup of them
// repeating an earlier one of the list, all signed now.
func (s *loadSource) deliveries(n int, dup float64) ([]webhook.Request, error) {
	now := time.Now()
	s.run = rand.Uint64() // ids of their own: one round's are not another's duplicates
	out := make([]webhook.Request, 0, n)
	for i := 0; i < n; i++ {
		if len(out) > 0 && math.Floor(float64(i+1)*dup) > math.Floor(float64(i)*dup) { // spread evenly
			out = append(out, out[(i*7919)%len(out)])
			continue
		}
		req, err := s.p.Sign(s.event(i), s.secrets, now)
		if err != nil {
			return nil, fmt.Errorf("sign a %s delivery: %w", s.p.Name(), err)
		}
		out = append(out, req)
	}
	return out, nil
}
