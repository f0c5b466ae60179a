package cli

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// maxLoadSample bounds the sample event load sends without --size: a
// realistic delivery, not the largest the provider ever sends.
const maxLoadSample = 4 << 10

// loadSource makes a provider's deliveries for load: its sample event,
// made a fresh event by the provider's Sample each time, signed as the
// provider signs it.
type loadSource struct {
	s       sample.Sender
	secrets []string
	body    []byte
	file    string // the sample's base name: the type, for a provider that sends it beside the body
	size    int    // pad each body to size (0: no padding)
}

// newLoadSource reads p's sample events in root/testdata/<name>/ and takes
// the largest no bigger than size (0: maxLoadSample).
// It fails for a provider without a Sample (sample.Sender.Sample): load
// could not give its events fresh ids.
func newLoadSource(root string, s sample.Sender, size int, secrets []string) (*loadSource, error) {
	p := s.Provider
	if s.Sample == nil {
		return nil, usagef("load gives each event a fresh id through the provider's Sample, and %s has none", p.Name())
	}
	file, body, err := loadSample(filepath.Join(root, "testdata", p.Name()), size)
	if err != nil {
		return nil, err
	}
	return &loadSource{s: s, secrets: secrets, body: body, file: filepath.Base(file), size: size}, nil
}

// loadSample returns the largest JSON file in dir no bigger than size
// (0: maxLoadSample), and its name.
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
	return name, best, nil
}

// paddingMember is the JSON member padJSON adds.
const paddingMember = "hookinbox_load_padding"

// padJSON returns the JSON object body with a member that makes it size
// bytes long.
func padJSON(body []byte, size int) ([]byte, error) {
	const member = `"` + paddingMember + `":"",`
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(body), []byte("{"))
	if !ok {
		return nil, fmt.Errorf("--size pads a JSON object, and the sample event is not one")
	}
	n := size - len(rest) - len("{") - len(member)
	if n < 0 {
		return nil, usagef("--size %d: the sample event is %d bytes", size, len(body))
	}
	return fmt.Appendf(nil, `{"%s":"%s",%s`, paddingMember, strings.Repeat("x", n), rest), nil
}

// event returns a fresh event of the sample, padded to the size asked.
func (s *loadSource) event() (sample.Event, error) {
	ev, err := s.s.Sample(sample.Event{Body: s.body, File: s.file, Fresh: true})
	if err != nil {
		return ev, fmt.Errorf("sample a %s event: %w", s.s.Provider.Name(), err)
	}
	if s.size > 0 {
		ev.Body, err = padJSON(ev.Body, s.size)
	}
	return ev, err
}

// deliveries returns n deliveries of fresh events, a share dup of them
// repeating an earlier one of the list, all signed now.
func (s *loadSource) deliveries(n int, dup float64) ([]webhook.Request, error) {
	now := time.Now()
	out := make([]webhook.Request, 0, n)
	for i := 0; i < n; i++ {
		if len(out) > 0 && math.Floor(float64(i+1)*dup) > math.Floor(float64(i)*dup) { // spread evenly
			out = append(out, out[(i*7919)%len(out)])
			continue
		}
		ev, err := s.event()
		if err != nil {
			return nil, err
		}
		req, err := s.s.Sign(ev, s.secrets, now)
		if err != nil {
			return nil, fmt.Errorf("sign a %s delivery: %w", s.s.Provider.Name(), err)
		}
		out = append(out, req)
	}
	return out, nil
}
