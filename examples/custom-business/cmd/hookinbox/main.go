// Command hookinbox is hookinbox's CLI with this module's own provider
// (warehouse) beside hookinbox's, so `go tool hookinbox send warehouse
// shipment.dispatched` signs as the warehouse does. go.mod's tool line
// names this package.
package main

import (
	"github.com/hookinbox/hookinbox/cli"

	"example.com/custom-business/warehouse"
)

func main() { cli.Main(warehouse.Sender()) }
