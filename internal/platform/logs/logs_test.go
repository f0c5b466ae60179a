package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/go-cmp/cmp"
)

// lines logs through a DEBUG logger with fn and returns each line decoded.
func lines(t *testing.T, fn func(ctx context.Context, log *slog.Logger)) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	fn(ctx, New(&buf, slog.LevelDebug))
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		delete(m, "time")
		out = append(out, m)
	}
	return out
}

type stringer string

func (s stringer) String() string { return string(s) }

func TestEmailsScrubbedAtEveryLevel(t *testing.T) {
	got := lines(t, func(ctx context.Context, log *slog.Logger) {
		log = log.With("to", "jenny.rosen@example.com")
		log.DebugContext(ctx, "sending to jenny.rosen@example.com")
		log.Info("x", "err", errors.New("ses: MessageRejected: Email address is not verified: jenny.rosen@example.com"))
		log.Warn("x", "who", stringer("buyer%40example.org"), slog.Group("g", "mail", "a.b@c.io"))
		log.Error("x", "count", 3)
	})
	for _, l := range got {
		if b, _ := json.Marshal(l); strings.Contains(string(b), "example.com") || strings.Contains(string(b), "example.org") || strings.Contains(string(b), "c.io") {
			t.Errorf("address in %s", b)
		}
	}
	if got[0]["msg"] != "sending to [email]" || got[0]["to"] != "[email]" || got[0][RequestID] != "req-1" {
		t.Errorf("first line %v", got[0])
	}
	if got[1][RequestID] != nil {
		t.Errorf("a line logged without the context has a request id: %v", got[1])
	}
	if got[3]["count"] != float64(3) {
		t.Errorf("numbers changed: %v", got[3])
	}
}

func TestProviderFromKey(t *testing.T) {
	got := lines(t, func(ctx context.Context, log *slog.Logger) {
		log.InfoContext(ctx, "a", "key", "stripe#evt_1", "type", "invoice.paid")
		log.With("provider", "gopay").InfoContext(ctx, "b", "key", "gopay#123")
		ev := log.With("key", "stripe#evt_2", "type", "checkout.session.completed")
		ev.Info("c")
		ev.Info("d", "key", "stripe#evt_2")
		log.Info("e", "key", "not a key")
	})
	want := []map[string]any{
		{"level": "INFO", "msg": "a", "key": "stripe#evt_1", "type": "invoice.paid", "provider": "stripe", RequestID: "req-1"},
		{"level": "INFO", "msg": "b", "key": "gopay#123", "provider": "gopay", RequestID: "req-1"},
		{"level": "INFO", "msg": "c", "key": "stripe#evt_2", "type": "checkout.session.completed", "provider": "stripe"},
		{"level": "INFO", "msg": "d", "key": "stripe#evt_2", "type": "checkout.session.completed", "provider": "stripe"},
		{"level": "INFO", "msg": "e", "key": "not a key"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestLevel(t *testing.T) {
	for env, want := range map[string]slog.Level{
		"": slog.LevelInfo, "TRACE": slog.LevelDebug, "debug": slog.LevelDebug, "INFO": slog.LevelInfo,
		"WARN": slog.LevelWarn, "ERROR": slog.LevelError, "FATAL": slog.LevelError, "loud": slog.LevelInfo,
	} {
		if got := Level(func(string) string { return env }); got != want {
			t.Errorf("AWS_LAMBDA_LOG_LEVEL=%q: %v, want %v", env, got, want)
		}
	}
}
