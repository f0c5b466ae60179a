// Package hookinbox holds hookinbox's SAM template as this version ships
// it (Template), for generating a team's own stack from it
// (stacktemplate.Generate, `hookinbox template`). The code that handles
// events is in webhook, effects, stripeevent and processorfn.
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
