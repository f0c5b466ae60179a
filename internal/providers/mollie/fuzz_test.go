package mollie_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/webhook"
)

// FuzzVerify: whatever the body, Verify never panics, refuses with a
// malformed error (400), and accepts only a payment id CheckID accepts,
// keyed mollie#<id>.
func FuzzVerify(f *testing.F) {
	for _, s := range []string{"id=tr_5B8cwPMGnU6qLbRvo7qEZo", "id=tr_d0b0E3EA3v&id=tr_x", "id=%zz", "id=tr_%23", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		evs, err := mollie.Verifier{}.Verify(context.Background(), webhook.Request{Method: "POST", Body: body})
		if err != nil {
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("error %v is not malformed", err)
			}
			return
		}
		if len(evs) != 1 || mollie.CheckID(evs[0].ID) != nil || !evs[0].IDOnly {
			t.Fatalf("accepted %v", evs)
		}
		if _, err := webhook.ParseKey(string(evs[0].Key())); err != nil {
			t.Fatalf("key %q: %v", evs[0].Key(), err)
		}
	})
}
