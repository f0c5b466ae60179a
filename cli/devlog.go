package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// serveLogged serves r with h and logs one line: method, path, status, the
// receiver's answer and the event it was about.
func (d *devStack) serveLogged(h http.Handler, w http.ResponseWriter, r *http.Request) {
	begin := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20+1))
	if err != nil {
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if st := d.stack.Load(); st != nil && r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, webhookPath) {
		st.Delivered(strings.TrimPrefix(r.URL.Path, webhookPath), body)
	}
	rec := &recorder{ResponseWriter: w}
	h.ServeHTTP(rec, r)

	var answer struct {
		Status  string `json:"status"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(rec.body.Bytes(), &answer)
	what := strings.TrimSpace(answer.Status + answer.Error + answer.Message)
	about := ""
	for _, ev := range d.deliveryEvents(r, body) {
		about += fmt.Sprintf(" %s (%s)", ev.Key(), ev.Type)
	}
	d.logf("%s %s → %d %s%s %s", r.Method, r.URL.Path, rec.status(), what, about, time.Since(begin).Round(time.Millisecond))
}

// webhookPath is where the HTTP API takes deliveries: webhookPath+provider.
const webhookPath = "/webhooks/"

// deliveryVerifiers builds, from a receiver function's environment, the
// verifier of every provider it enables with inline secrets (the local
// stack's), as the receiver does: the dev log names the events a delivery
// carries only once they verify, so a forged body's claims never reach it.
func deliveryVerifiers(env map[string]string) map[string]provider.Verifier {
	penv := &provider.Env{Getenv: func(k string) string { return env[k] }}
	out := map[string]provider.Verifier{}
	for _, p := range providers().All() {
		secrets := envconfig.Split(env[p.Webhook().SecretEnv])
		if !p.Webhook().Unsigned && len(secrets) == 0 {
			continue
		}
		if v, err := p.Verifier(secrets, penv); err == nil {
			out[p.Name()] = v
		}
	}
	return out
}

// deliveryEvents returns the events of a webhook delivery as its
// provider's verifier reads them, or none when the request is no delivery
// or does not verify.
func (d *devStack) deliveryEvents(r *http.Request, body []byte) []webhook.Event {
	provider, ok := strings.CutPrefix(r.URL.Path, webhookPath)
	v := d.verifiers[provider]
	if !ok || v == nil {
		return nil
	}
	req := webhook.Request{Method: r.Method, Header: map[string]string{}, Query: map[string]string{}, Body: body}
	for k, vs := range r.Header {
		req.Header[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	for k, vs := range r.URL.Query() {
		req.Query[k] = strings.Join(vs, ",")
	}
	evs, err := v.Verify(r.Context(), req)
	if err != nil {
		return nil
	}
	return evs
}

// recorder keeps the status and the start of the body of a response.
type recorder struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	if r.body.Len() < 1024 {
		r.body.Write(p[:min(len(p), 1024-r.body.Len())])
	}
	return r.ResponseWriter.Write(p)
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// batchLogger logs one line per SQS batch a function gets, naming each
// event's outcome as the inbox records it after the batch.
type batchLogger struct {
	d         *devStack
	fn        lambdalocal.Invoker
	id, queue string
	// status returns an event's inbox item after the batch; nil for
	// functions whose messages are not inbox events.
	status func(ctx context.Context, key webhook.Key) (inbox.Item, error)
	// pointers, by provider, recognise a notification that only points
	// at its event, which the function fetches (fetchPointers).
	pointers map[string]func([]byte) bool
}

func (b *batchLogger) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	begin := time.Now()
	out, err := b.fn.Invoke(ctx, payload)
	var batch events.SQSEvent
	_ = json.Unmarshal(payload, &batch)
	took := time.Since(begin).Round(time.Millisecond)
	if err != nil {
		var keys []string
		for _, m := range batch.Records {
			keys = append(keys, messageLabel(m))
		}
		b.d.logf("%s ← %s: batch of %d [%s] → function error, the batch stays on the queue: %v %s",
			b.id, b.queue, len(batch.Records), strings.Join(keys, " "), err, took)
		return out, err
	}
	var resp events.SQSEventResponse
	_ = json.Unmarshal(out, &resp)
	retried := make(map[string]bool, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		retried[f.ItemIdentifier] = true
	}
	outcomes := make([]string, 0, len(batch.Records))
	for _, m := range batch.Records {
		outcomes = append(outcomes, messageLabel(m)+" "+b.outcome(ctx, m, retried[m.MessageId]))
	}
	b.d.logf("%s ← %s: batch of %d → %s %s", b.id, b.queue, len(batch.Records), strings.Join(outcomes, ", "), took)
	return out, nil
}

// messageLabel names a message by its event key, or by its message ID.
func messageLabel(m events.SQSMessage) string {
	if env, err := queue.ParseEnvelope(m.Body); err == nil {
		return string(env.Key)
	}
	return "message " + m.MessageId
}

// outcome says what became of one message's event: done, ignored, failed
// and retrying, parked, or still waiting for another worker.
func (b *batchLogger) outcome(ctx context.Context, m events.SQSMessage, retry bool) string {
	env, err := queue.ParseEnvelope(m.Body)
	if b.status == nil || err != nil {
		if retry {
			return "to retry"
		}
		return "handled"
	}
	it, err := b.status(ctx, env.Key)
	if err != nil {
		if retry {
			return "to retry"
		}
		return "handled (" + err.Error() + ")"
	}
	if pointer := b.pointers[env.Key.Provider()]; pointer != nil && it.Payload != nil && pointer(it.Payload) {
		// What ran is what the processor fetched, not the notification.
		return itemOutcome(it, retry) + " (the notification only points at it: fetched from " + env.Key.Provider() + "'s API)"
	}
	return itemOutcome(it, retry)
}

// fetchPointers returns, by provider, how a function with env recognises
// a stored notification that only points at its event (every one of an
// id-only provider's, or the provider's Fetch.Pointer, from its
// Processor): such an event is fetched from the provider's API. A
// provider whose Processor fails with env is left out.
func fetchPointers(ctx context.Context, env map[string]string) map[string]func([]byte) bool {
	penv := &provider.Env{Getenv: func(k string) string { return env[k] }}
	out := map[string]func([]byte) bool{}
	for _, p := range providers().All() {
		f, err := p.Processor(ctx, penv)
		switch {
		case err != nil || f.Get == nil:
		case p.Webhook().IDOnly:
			out[p.Name()] = func([]byte) bool { return true }
		case f.Pointer != nil:
			out[p.Name()] = f.Pointer
		}
	}
	return out
}

// itemOutcome says what the inbox item it records after a batch.
func itemOutcome(it inbox.Item, retry bool) string {
	switch {
	case it.Status == inbox.Done:
		return "done"
	case it.Status == inbox.Ignored:
		return "ignored (no handler)"
	case it.Status == inbox.Dead:
		return "PARKED in the DLQ: " + it.LastError
	case it.Status == inbox.Failed:
		return fmt.Sprintf("FAILED, retrying (attempt %d): %s", it.Attempts, it.LastError)
	case retry:
		return strings.ToLower(string(it.Status)) + ", to retry"
	default:
		return strings.ToLower(string(it.Status))
	}
}

// scheduleLogger logs one line per scheduled invocation.
type scheduleLogger struct {
	d        *devStack
	fn       lambdalocal.Invoker
	id, expr string
}

func (s *scheduleLogger) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	begin := time.Now()
	out, err := s.fn.Invoke(ctx, payload)
	took := time.Since(begin).Round(time.Millisecond)
	if err != nil {
		s.d.logf("%s ← %s → function error: %v %s", s.id, s.expr, err, took)
		return out, err
	}
	summary := strings.TrimSpace(string(out))
	if len(summary) > 200 {
		summary = summary[:200] + "…"
	}
	s.d.logf("%s ← %s → ok %s %s", s.id, s.expr, summary, took)
	return out, nil
}
