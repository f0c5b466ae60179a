// Command receiver is this module's receiver Lambda: hookinbox's receiver
// with the warehouse provider beside hookinbox's.
package main

import (
	"example.com/custom-business/warehouse"

	"github.com/hookinbox/hookinbox/receiverfn"
)

func main() { receiverfn.Run(warehouse.Provider{}) }
