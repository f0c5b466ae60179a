package inbox_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestFindSubjects(t *testing.T) {
	ev := webhook.Event{Provider: "shopify", ID: "1", Type: "orders/paid"}
	many := make([]string, inbox.MaxSubjects+5)
	down := errors.New("secrets manager down")
	tests := []struct {
		name  string
		find  func(context.Context, webhook.Event) ([]string, error)
		want  int
		err   error
		warns bool
	}{
		{name: "no finder"},
		{name: "two", find: func(context.Context, webhook.Event) ([]string, error) { return many[:2], nil }, want: 2},
		{name: "more than a claim holds: the first", find: func(context.Context, webhook.Event) ([]string, error) { return many, nil },
			want: inbox.MaxSubjects, warns: true},
		{name: "failed", find: func(context.Context, webhook.Event) ([]string, error) { return nil, down }, err: down},
	}
	for _, tt := range tests {
		var log bytes.Buffer
		got, err := inbox.FindSubjects(context.Background(), tt.find, ev, slog.New(slog.NewTextHandler(&log, nil)))
		if len(got) != tt.want || !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
			t.Errorf("%s: FindSubjects = %d hashes, %v; want %d, %v", tt.name, len(got), err, tt.want, tt.err)
		}
		if warned := strings.Contains(log.String(), "level=WARN"); warned != tt.warns {
			t.Errorf("%s: warned %v; want %v (%s)", tt.name, warned, tt.warns, log.String())
		}
	}
}
