package inboxtest_test

import (
	"testing"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
)

func TestMemoryConformance(t *testing.T) {
	inboxtest.Run(t, func(*testing.T) inbox.Store { return inboxtest.NewMemory() })
}
