package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
)

// printBanner prints what runs, what to try and how other tools reach
// the stack.
func (d *devStack) printBanner(s *devState, specs []pipeline.Function) {
	w := d.stdout
	mode := "in-process handlers (internal/local/catalog); --rie runs the real bootstraps"
	if d.flags.rie {
		mode = "bootstrap binaries under aws-lambda-rie"
	}
	fmt.Fprintf(w, "\nhookinbox local stack %q is ready: %s\n\n", s.StackName, mode)
	fmt.Fprintf(w, "  Webhook URL     %s\n", s.WebhookURL)
	fmt.Fprintf(w, "  Signing secret  %s   (local only)\n", s.WebhookSecret)
	fmt.Fprintf(w, "  Health          %s\n", s.HealthURL)
	fmt.Fprintf(w, "  State file      %s\n\n", d.flags.stateFile)
	printResources(w, s, specs)
	d.printTryIt(w, s)
	printDestinations(w, d.destinations, d.flags.forward, d.flags.forwardSecret)
	printExports(w, s)
	fmt.Fprintln(w, "\nOne line per request or batch follows on stderr (--verbose adds the functions' logs). Ctrl-C stops everything.")
}

// printResources prints the functions with their events, the tables and
// the queues.
func printResources(w io.Writer, s *devState, specs []pipeline.Function) {
	fmt.Fprintln(w, "Functions:")
	for _, spec := range specs {
		var ts []string
		for _, t := range spec.Triggers {
			ts = append(ts, t.String())
		}
		if len(ts) == 0 {
			ts = []string{"no events; invoke it by hand"}
		}
		fmt.Fprintf(w, "  %-20s %s\n", spec.LogicalID, strings.Join(ts, "; "))
	}
	tables := make([]string, 0, len(s.Tables))
	for _, n := range s.Tables {
		tables = append(tables, n)
	}
	sort.Strings(tables)
	queues := make([]string, 0, len(s.Queues))
	for _, q := range s.Queues {
		queues = append(queues, q.Name)
	}
	sort.Strings(queues)
	fmt.Fprintf(w, "Tables: %s\nQueues: %s\n\n", strings.Join(tables, ", "), strings.Join(queues, ", "))
}

// printTryIt prints the commands to try in another terminal: send the
// same event three times, then look at the example shop (with a CLI that
// has its state command), or inspect the event; with the shop, send one
// it parks; then open the console.
func (d *devStack) printTryIt(w io.Writer, s *devState) {
	stateArg := ""
	if d.flags.stateFile != defaultStateFile() {
		stateArg = " --state-file " + d.flags.stateFile
	}
	self, first := selfCommand(), d.app.firstProvider().Name()
	send := fmt.Sprintf("  %s send %s %s --times 3%s\n", self, first, d.sampleType, stateArg)
	_, shop := s.Tables["ShopTable"]
	if shop && d.app.command("state") != nil {
		fmt.Fprintln(w, "In another terminal, send the same event three times, then look at the shop:")
		fmt.Fprint(w, send)
		fmt.Fprintf(w, "  %s state%s\n", self, stateArg)
	} else {
		fmt.Fprintln(w, "In another terminal, send the same event three times, then inspect it (send prints its key):")
		fmt.Fprint(w, send)
		fmt.Fprintf(w, "  %s inspect '%s#<event id>'%s\n", self, first, stateArg)
	}
	if park, ok := pipeline.ParkExample(first); ok && shop {
		fmt.Fprintln(w, "Send one the shop cannot finish (it is parked: the console says why), then replay it from the browser:")
		fmt.Fprintf(w, "  %s send %s%s\n", self, park, stateArg)
	} else {
		fmt.Fprintln(w, "See the events in a browser, and replay the parked ones:")
	}
	fmt.Fprintf(w, "  %s console%s   (open the URL it prints: Events, the DEAD one, Replay)\n", self, stateArg)
	fmt.Fprintf(w, "From elsewhere: --url %s --secret %s\n\n", s.WebhookURL, s.WebhookSecret)
}

// printExports prints the variables that point other tools (AWS CLI,
// SDKs) at the stack.
func printExports(w io.Writer, s *devState) {
	fmt.Fprintln(w, "Point other tools (AWS CLI, SDKs) at the stack:")
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var exports []string
	for _, k := range keys {
		exports = append(exports, k+"="+s.Env[k])
	}
	fmt.Fprintf(w, "  export %s\n", strings.Join(exports, " "))
	if n, ok := s.Tables["InboxTable"]; ok {
		fmt.Fprintf(w, "  aws dynamodb scan --table-name %s\n", n)
	}
}
