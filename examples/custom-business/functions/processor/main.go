// Command processor is this module's processor Lambda: hookinbox's
// processor with the CRM business and the warehouse provider.
package main

import (
	"example.com/custom-business/crm"
	"example.com/custom-business/warehouse"

	"github.com/hookinbox/hookinbox/processorfn"
)

func main() { processorfn.Run(crm.FromEnv, warehouse.Provider{}) }
