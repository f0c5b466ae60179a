package hookinboxtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestEventTypesDiff(t *testing.T) {
	nop := func(context.Context, webhook.Event, effects.Runner) error { return nil }
	mux := processorfn.NewMux().
		On("stripe", nop, "invoice.paid", "checkout.session.completed").
		On("shopify", nop, "orders/paid")
	tests := map[string]struct {
		file string
		want []string
	}{
		"the same": {file: "EventTypes:\n  stripe: [invoice.paid, checkout.session.completed]\n  shopify: [orders/paid]\n"},
		"a handler not declared": {
			file: "EventTypes:\n  stripe: [checkout.session.completed]\n  shopify: [orders/paid]\n",
			want: []string{"the business handles stripe invoice.paid: add it to EventTypes stripe and generate the template again"},
		},
		"a type declared and not handled": {
			file: "EventTypes:\n  stripe: [invoice.paid, checkout.session.completed, invoice.created]\n  shopify: [orders/paid]\n",
			want: []string{"EventTypes stripe lists invoice.created, which the business does not handle: remove it, or register a handler"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "business.yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			rec := &recordingTB{TB: t}
			CheckEventTypes(rec, mux, path)
			if diff := cmp.Diff(tt.want, rec.errors); diff != "" {
				t.Errorf("CheckEventTypes's errors (-want +got):\n%s", diff)
			}
		})
	}
}

// recordingTB records Errorf's messages, without their prefix, instead of
// failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.errors = append(r.errors, msg[strings.LastIndex(msg, ".yaml: ")+len(".yaml: "):])
}
