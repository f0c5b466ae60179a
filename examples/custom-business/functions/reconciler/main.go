// Command reconciler is this module's reconciler Lambda: hookinbox's
// reconciler with the warehouse provider beside hookinbox's.
package main

import (
	"example.com/custom-business/warehouse"

	"github.com/hookinbox/hookinbox/reconcilerfn"
)

func main() { reconcilerfn.Run(warehouse.Provider{}) }
