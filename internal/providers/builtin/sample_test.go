package builtin_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestEverySampleIsAFreshEvent: every builtin provider with samples
// turns each of its testdata files, sent by name, into a delivery its
// own verifier accepts under the local secrets, keyed and typed as
// Sample says, with fresh ids (two samples of one file are two events);
// an id-only provider's notification carries the id and its payment is
// in API, where the stand-in serves it from.
func TestEverySampleIsAFreshEvent(t *testing.T) {
	type sampleFile struct {
		sender  sample.Sender
		file    string
		variant string
	}
	var samples []sampleFile
	for _, sd := range builtin.Senders() {
		p := sd.Provider
		if sd.Sample == nil {
			continue
		}
		files, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", p.Name(), "*.json"))
		if len(files) == 0 {
			t.Errorf("%s has a Sample and no samples in testdata/%s", p.Name(), p.Name())
		}
		for _, f := range files {
			samples = append(samples, sampleFile{sd, f, ""})
			for _, v := range sd.Variants {
				samples = append(samples, sampleFile{sd, f, v.Name})
			}
		}
	}
	for _, s := range samples {
		p := s.sender.Provider
		t.Run(p.Name()+"/"+filepath.Base(s.file)+"/"+s.variant, func(t *testing.T) {
			body, err := os.ReadFile(s.file)
			if err != nil {
				t.Fatal(err)
			}
			secrets := envconfig.Split(pipeline.LocalEnv("")[p.Webhook().SecretEnv])
			signers := append(secrets, pipeline.SenderKeys[p.Webhook().SecretEnv]...)
			v, err := p.Verifier(secrets, &provider.Env{})
			if err != nil {
				t.Fatal(err)
			}
			var keys []webhook.Key
			for range 2 {
				ev, err := s.sender.Sample(sample.Event{Body: bytes.Clone(body), File: filepath.Base(s.file), Variant: s.variant, Fresh: true})
				if err != nil {
					t.Fatal(err)
				}
				req, err := s.sender.Sign(ev, signers, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				evs, err := v.Verify(context.Background(), req)
				if err != nil || len(evs) != 1 {
					t.Fatalf("Verify = %v, %v; want the sample's one event", evs, err)
				}
				got := evs[0]
				if p.Webhook().IDOnly {
					// The type is the fetched object's: the stand-in serves
					// the payment at its API path.
					if got.ID != ev.ID || !bytes.Equal(ev.API[apiPath(ev.API, ev.ID)], ev.Body) {
						t.Errorf("notified %s with API paths %v; want the sample's id %s and its payment in API", got.ID, slices.Collect(maps.Keys(ev.API)), ev.ID)
					}
				} else if got.ID != ev.ID || got.Type != ev.Type {
					t.Errorf("verified %s %s, Sample said %s %s", got.ID, got.Type, ev.ID, ev.Type)
				}
				keys = append(keys, got.Key())
			}
			if keys[0] == keys[1] {
				t.Errorf("two samples of %s are both %s", s.file, keys[0])
			}
		})
	}
}

// apiPath returns the path of api that ends in id.
func apiPath(api map[string][]byte, id string) string {
	for path := range api {
		if strings.HasSuffix(path, "/"+id) {
			return path
		}
	}
	return ""
}
