package gopay_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/hookinbox/hookinbox/webhook"
)

func TestGoPayVerify(t *testing.T) {
	evs, err := gopay.Verifier{}.Verify(context.Background(), webhook.Request{Method: "GET", Query: map[string]string{"id": "3000006529"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Key() != "gopay#3000006529" || !evs[0].IDOnly || string(evs[0].Raw) != `{"id":3000006529}` {
		t.Fatalf("Verify = %+v", evs)
	}
	tests := []struct {
		name, id string
		want     error
	}{
		{"missing id", "", provider.ErrNoEventID},
		{"letters", "30000065a9", provider.ErrBadEventID},
		{"negative", "-1", provider.ErrBadEventID},
		{"leading zero", "0123", provider.ErrBadEventID},
		{"repeated id (API Gateway joins them)", "1,2", provider.ErrBadEventID},
		{"too long", strings.Repeat("9", 20), provider.ErrBadEventID},
		{"above 2^63-1 (19 digits)", "9999999999999999999", provider.ErrBadEventID},
		{"2^63", "9223372036854775808", provider.ErrBadEventID},
		{"zero", "0", provider.ErrBadEventID},
		{"plus sign", "+123", provider.ErrBadEventID},
		{"unicode digits", "３０００", provider.ErrBadEventID},
	}
	for _, id := range []string{"1", "9223372036854775807"} {
		if _, err := (gopay.Verifier{}).Verify(context.Background(), webhook.Request{Query: map[string]string{"id": id}}); err != nil {
			t.Errorf("id %s: %v, want accepted", id, err)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gopay.Verifier{}.Verify(context.Background(), webhook.Request{Query: map[string]string{"id": tc.id}})
			if !errors.Is(err, tc.want) || !errors.Is(err, webhook.ErrMalformed) {
				t.Errorf("err = %v, want %v (400)", err, tc.want)
			}
		})
	}
}

// FuzzGoPayVerify: no panic; an accepted id is a positive int64 written in
// ASCII digits without a leading zero, and makes a valid key; everything
// else is malformed.
func FuzzGoPayVerify(f *testing.F) {
	f.Add("3000006529")
	f.Add("")
	f.Add("1e9")
	f.Add("9223372036854775808")
	f.Fuzz(func(t *testing.T, id string) {
		evs, err := gopay.Verifier{}.Verify(context.Background(), webhook.Request{Query: map[string]string{"id": id}})
		if err != nil {
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("error %v is not malformed", err)
			}
			return
		}
		n, perr := strconv.ParseInt(id, 10, 64)
		if perr != nil || n <= 0 || strconv.FormatInt(n, 10) != id || webhook.ValidateEventID(evs[0].ID) != nil {
			t.Fatalf("accepted id %q", id)
		}
	})
}
