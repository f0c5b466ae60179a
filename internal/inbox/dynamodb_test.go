package inbox_test

import (
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
)

// TestDynamoDBConformance runs the suite on dynalite, on the table exactly
// as template.yaml declares it (keys and the pending index).
func TestDynamoDBConformance(t *testing.T) {
	emu := devstacktest.ForTest(t)
	inboxtest.Run(t, func(t *testing.T) inbox.Store {
		if strings.Contains(t.Name(), "/Concurrent") {
			devstacktest.SkipOnMoto(t, emu, devstack.MotoRacyConditions)
		}
		st := devstacktest.NewTestStack(t)
		return inbox.NewDynamoDB(emu.LeanDynamoDB(), st.Tables["InboxTable"])
	})
}
