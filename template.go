// Package hookinbox holds hookinbox's SAM template as this version ships
// it (Template), from which `hookinbox template` generates a team's own
// stack. A team's code imports the packages below it: webhook, effects,
// stripeevent, processorfn and the other fn packages, hookinboxtest.
package hookinbox

import (
	"bytes"
	_ "embed"
)

//go:embed template.yaml
var template []byte

// Template returns hookinbox's template.yaml: its receiver, queues,
// processor, replay, reconciler and alarms, with the example shop as the
// processor's business.
func Template() []byte { return bytes.Clone(template) }
