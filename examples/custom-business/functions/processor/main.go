// Command processor is this module's processor Lambda: hookinbox's
// processor with the CRM business.
package main

import (
	"example.com/custom-business/crm"

	"github.com/hookinbox/hookinbox/processorfn"
)

func main() { processorfn.Run(crm.FromEnv) }
