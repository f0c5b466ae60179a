// Package hookinboxtest runs hookinbox's pipeline — receiver → SQS events
// queue → processor (→ DLQ) — on the local emulators with your Business
// and your stack's template, so a team's own module can test its effects
// end to end before it deploys: deliveries of every provider (Event,
// Deliver), duplicates and shuffled order, and a check that fails the
// processing of an event at every point between its effects and after a
// lost DynamoDB answer, and counts your outside side effects (CheckOnce).
//
// New starts (or reuses) dynalite and local-aws-sqs from hookinbox's
// local/ lock file (moto with HOOKINBOX_EMULATORS=moto) and creates a
// fresh stack under a unique name from your template: every table and
// queue in it (your business's tables too), each function's environment
// as the template sets it, resolved to the local stack. It deletes them
// when the test ends. The processor runs your business as the deployed
// function does (processorfn.Builder): its DynamoDB client
// (processorfn.DynamoDB) reaches the emulators, your settings come from
// the template's environment and Options.Env. The emulators need Node.js
// 20 with npm: the first run installs them (npm ci, from hookinbox's lock
// file) into <user cache dir>/hookinbox/emulators-<hash>
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux), never into the
// read-only module cache. Tests that
// share the emulators do not see each other's events. With -short, New
// skips the test. It is part of hookinbox's public API (test helpers
// only: nothing shipped imports it).
package hookinboxtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/lostanswer"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Pipeline is one test's hookinbox stack with its business.
type Pipeline struct {
	p       *pipelinetest.Pipeline
	faults  *faults
	lost    *lostanswer.Proxy
	reg     *provider.Registry
	senders map[string]sample.Sender
}

// Options say what New runs.
type Options struct {
	// Business builds the processor's business, as processorfn.Run
	// does in your processor's main. Required.
	Business processorfn.BusinessBuilder
	// Env is added to the processor's environment, over the template's.
	Env map[string]string
	// Parameters are the template's parameter values, over its
	// defaults: a parameter without a default (your CRM's URL, say)
	// needs one.
	Parameters map[string]string
	// Providers are the senders of your own providers (sample.Sender),
	// beside hookinbox's; the functions get each Sender's Provider as
	// your mains hand it to processorfn.Run, receiverfn.Run and
	// reconcilerfn.Run. Each gets the local secret
	// "local-hookinbox-<name>" in the variable it names
	// (Webhook().SecretEnv), in every function whose template
	// environment declares it; Deliver signs with it (Sender.Sign).
	Providers []sample.Sender
	// Template is the path of the SAM template the stack is made of.
	// Default: template.yaml at the root of the module under test (the
	// nearest directory at or above the working directory with a
	// go.mod), or hookinbox's own when that module has none.
	Template string
}

// New builds the pipeline opts say. The receiver accepts the local
// signing secrets Deliver signs with; the providers' APIs are local
// stand-ins. The processor retries a failed event after 1 s
// (BACKOFF_MAX; Options.Env may set another), and reaches DynamoDB
// through a proxy that CheckOnce uses to lose answers.
func New(t testing.TB, opts Options) *Pipeline {
	t.Helper()
	if opts.Business == nil {
		t.Fatal("hookinboxtest: Options.Business is nil")
	}
	path, err := templatePath(opts.Template)
	if err != nil {
		t.Fatalf("hookinboxtest: %v", err)
	}
	tpl, err := samtemplate.Load(path)
	if err != nil {
		t.Fatalf("hookinboxtest: template %s: %v", path, err)
	}
	emu := devstacktest.ForTest(t)
	lost := lostanswer.Start(t, emu.DynamoDBURL)
	f := &faults{failAt: -1}
	env := map[string]string{"BACKOFF_MAX": "1s"}
	for k, v := range opts.Env {
		env[k] = v
	}
	env["AWS_ENDPOINT_URL_DYNAMODB"] = lost.URL
	var own []provider.Provider
	secrets := map[string]string{}
	for _, s := range opts.Providers {
		own = append(own, s.Provider)
		secrets[s.Provider.Webhook().SecretEnv] = "local-hookinbox-" + s.Provider.Name()
	}
	reg, err := builtin.Registry(own...)
	if err != nil {
		t.Fatalf("hookinboxtest: %v", err)
	}
	f.reg = reg
	p := pipelinetest.NewWith(t, pipelinetest.Options{
		Processor:    processorfn.Builder(f.wrap(opts.Business), own...),
		ProcessorEnv: env,
		Template:     tpl,
		Params:       opts.Parameters,
		Providers:    own,
		Secrets:      secrets,
	})
	return &Pipeline{p: p, faults: f, lost: lost, reg: reg, senders: pipeline.Senders(opts.Providers...)}
}

// templatePath returns path, or the default template (Options.Template).
func templatePath(path string) (string, error) {
	if path != "" {
		return filepath.Abs(path)
	}
	if d, err := moduleRoot(); err == nil {
		if _, err := os.Stat(filepath.Join(d, "template.yaml")); err == nil {
			return filepath.Join(d, "template.yaml"), nil
		}
	}
	root, err := devstack.RepoRoot("")
	if err != nil {
		return "", fmt.Errorf("no template.yaml in this module, and hookinbox's: %w", err)
	}
	return filepath.Join(root, "template.yaml"), nil
}

// ProcessUntil runs the processor on the events queue, as Lambda's event
// source would, until done reports true; it fails the test if done does
// not hold within the given time.
func (p *Pipeline) ProcessUntil(t testing.TB, within time.Duration, done func() bool) {
	t.Helper()
	p.p.ProcessUntil(t, within, done)
}

// Status returns the inbox status of the event key: RECEIVED, PROCESSING,
// DONE, FAILED, DEAD or IGNORED, or "" when there is no such event.
func (p *Pipeline) Status(t testing.TB, key webhook.Key) string {
	t.Helper()
	it, err := p.p.Inbox.Get(context.Background(), key)
	if errors.Is(err, inbox.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(it.Status)
}

// AllFinished reports whether every event of keys is DONE, IGNORED or DEAD.
func (p *Pipeline) AllFinished(t testing.TB, keys []webhook.Key) bool {
	t.Helper()
	for _, k := range keys {
		switch p.Status(t, k) {
		case string(inbox.Done), string(inbox.Ignored), string(inbox.Dead):
		default:
			return false
		}
	}
	return true
}

// Effects returns the effect ledger of the event key, sorted by effect name.
func (p *Pipeline) Effects(t testing.TB, key webhook.Key) []effects.Record {
	t.Helper()
	recs, err := ledger.New(p.p.DynamoDB, p.p.Stack.Tables["InboxTable"], 0).Records(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Table returns the local name of the template's table logicalID (your
// business's table: what the processor's environment names with !Ref),
// failing the test when the template has no such table.
func (p *Pipeline) Table(t testing.TB, logicalID string) string {
	t.Helper()
	name, ok := p.p.Stack.Tables[logicalID]
	if !ok {
		t.Fatalf("hookinboxtest: the template has no table %s", logicalID)
	}
	return name
}

// DynamoDB returns a DynamoDB client of the local emulators, for reading
// what your business wrote (Table names its tables). CheckOnce never
// loses its answers.
func (p *Pipeline) DynamoDB() *dynamodb.Client { return p.p.DynamoDB }
