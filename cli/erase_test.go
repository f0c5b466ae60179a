package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestEraseAndExportOnTheLocalStack: export lists a person's event by
// email, erase --dry-run changes nothing, erase removes the payload and
// keeps the dedupe record, and export then says it was erased.
func TestEraseAndExportOnTheLocalStack(t *testing.T) {
	emu, st := stackInEnv(t)
	ctx := context.Background()
	store := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	now := time.Now()
	ev := webhook.Event{Provider: "stripe", ID: "evt_cli_erase", Type: "customer.created", Created: now,
		Raw: []byte(`{"id":"evt_cli_erase","data":{"object":{"object":"customer","id":"cus_cli","email":"cli.jane@example.com"}}}`)}
	it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	hashes, _ := privacy.NewHasher(privacy.Keys{pipeline.SubjectKey}).Index(ctx, []provider.Subject{provider.EmailSubject("cli.jane@example.com")})
	if err := store.IndexSubjects(ctx, it.Key, hashes, it.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	path := localStateFile(t, emu, st)
	run := func(cmd func(context.Context, []string, *bytes.Buffer) error, args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := cmd(ctx, append(args, "--state-file", path), &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	erase := func(ctx context.Context, args []string, out *bytes.Buffer) error {
		return cmdErase(ctx, args, out, &bytes.Buffer{})
	}
	export := func(ctx context.Context, args []string, out *bytes.Buffer) error {
		return cmdExport(ctx, args, out, &bytes.Buffer{})
	}

	if out := run(export, "--email", "CLI.Jane@example.com"); !strings.Contains(out, "stripe#evt_cli_erase") || !strings.Contains(out, "inline") {
		t.Errorf("export printed:\n%s", out)
	}
	if out := run(erase, "--email", "cli.jane@example.com", "--dry-run"); !strings.Contains(out, "would erase 1 copies in 1 events") {
		t.Errorf("erase --dry-run printed:\n%s", out)
	}
	if _, err := store.Payload(ctx, it.Key); err != nil {
		t.Fatalf("payload after a dry run: %v", err)
	}
	if out := run(erase, "--subject", "email:cli.jane@example.com", "--by", "ticket-42"); !strings.Contains(out, "erased 1 copies in 1 events") {
		t.Errorf("erase printed:\n%s", out)
	}
	if _, err := store.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("payload after erase: %v, want ErrNotFound", err)
	}
	var rep privacy.Report
	if err := json.Unmarshal([]byte(run(export, "--email", "cli.jane@example.com", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Events) != 1 || rep.Events[0].Removed != inbox.RemovedErased || rep.Copies != 0 {
		t.Errorf("export after erase: %+v", rep)
	}
	var inspected bytes.Buffer
	if err := cmdInspect(ctx, []string{string(it.Key), "--state-file", path}, &inspected, &bytes.Buffer{}); err != nil || !strings.Contains(inspected.String(), "erased at") {
		t.Errorf("inspect after erase: %v\n%s", err, inspected.String())
	}
	if audits, _ := store.Erasures(ctx); len(audits) != 1 || audits[0].By != "ticket-42" {
		t.Errorf("audit records %+v, want one by ticket-42", audits)
	}
}

// TestEraseNeedsASubject: a subject that is not one is a usage error,
// before anything is read.
func TestEraseNeedsASubject(t *testing.T) {
	for _, args := range [][]string{{}, {"--subject", "cus_1"}, {"--email", "nobody"}} {
		err := cmdErase(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		var u *usageError
		if !errors.As(err, &u) {
			t.Errorf("erase %v: %v, want a usage error", args, err)
		}
	}
}
