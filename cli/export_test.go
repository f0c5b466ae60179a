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
	"github.com/hookinbox/hookinbox/internal/privacy"
)

// TestExportListsTheDataRequests: export --requests lists the data
// requests a provider sent with what hookinbox held then, in plain
// words and as JSON.
func TestExportListsTheDataRequests(t *testing.T) {
	emu, st := stackInEnv(t)
	ctx := context.Background()
	path := localStateFile(t, emu, st)
	store := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	held, _ := json.Marshal(privacy.Report{SubjectHash: "h1", Events: []privacy.EventReport{{Key: "stripe#evt_held", Provider: "stripe",
		Type: "checkout.session.completed", Status: inbox.Done, Where: []string{"inline"}, ExpiresAt: time.Now().Add(time.Hour)}}})
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	if err := store.RecordDataRequest(ctx, inbox.DataRequest{At: at, By: "shopify customers/data_request shopify#9",
		Reference: "x.myshopify.com data request 9999", SubjectHash: "h1", Report: held}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := cmdExport(ctx, []string{"--requests", "--state-file", path}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 data request received", "2026-12-01 12:00  shopify customers/data_request shopify#9 (x.myshopify.com data request 9999)",
		"in 1 event", "stripe#evt_held  checkout.session.completed  done"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("export --requests printed no %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := cmdExport(ctx, []string{"--requests", "--json", "--state-file", path}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var listed []struct {
		By   string
		Held privacy.Report
	}
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil || len(listed) != 1 || listed[0].Held.Events[0].Key != "stripe#evt_held" {
		t.Errorf("export --requests --json = %+v, %v", listed, err)
	}
}

// TestExportNeedsASubject: export without a person, or with one that is
// not one, is a usage error, before anything is read.
func TestExportNeedsASubject(t *testing.T) {
	for _, args := range [][]string{{}, {"--subject", "cus_1"}, {"--email", "nobody"}, {"--nope"}} {
		err := cmdExport(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		var u *usageError
		if !errors.As(err, &u) {
			t.Errorf("export %v: %v, want a usage error", args, err)
		}
	}
}
