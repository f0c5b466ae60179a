package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/hookinbox/hookinbox/internal/destination"
)

// printDeliveries prints each destination's delivery attempts of an event
// (destination.Log): how many, whether one was accepted, the last answer.
func printDeliveries(w io.Writer, as []destination.Attempts) {
	if len(as) == 0 {
		return
	}
	fmt.Fprintf(w, "\nDestinations: %d\n", len(as))
	for _, a := range as {
		state := "not delivered"
		if a.Delivered {
			state = "delivered"
		}
		fmt.Fprintf(w, "  %-20s %-13s attempts %d, last %s (%d ms) at %s, webhook-id %s\n",
			a.Destination, state, a.Attempts, printable(a.LastAnswer, ""), a.LastTookMS, a.LastAt.Local().Format(time.DateTime), a.WebhookID)
	}
}
