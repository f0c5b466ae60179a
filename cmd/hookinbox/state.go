package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/cli"
	"github.com/hookinbox/hookinbox/internal/shop"
)

// stateAbout is what state --help says about it.
const stateAbout = `Usage: hookinbox state [--json]

Prints the example shop's state in the running local stack: each holder's
access (the union of their entitlements), the entitlements (one per
purchase or subscription), subscriptions, emails sent and invoices created,
as recorded in its table (internal/shop). With --json, only JSON goes to
stdout.
`

// stateFlags are state's command line.
type stateFlags struct {
	asJSON    bool
	stateFile string
}

// parseState parses state's command line; --help prints its usage on
// stdout and is flag.ErrHelp.
func parseState(args []string, stdout io.Writer) (stateFlags, error) {
	var f stateFlags
	fs := flag.NewFlagSet("hookinbox state", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.asJSON, "json", false, "print JSON only")
	fs.StringVar(&f.stateFile, "state-file", "", "state file of the running stack (default $HOOKINBOX_STATE_FILE, else hookinbox-dev.json in the temporary directory)")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "%s\nFlags:\n", stateAbout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return f, err
	case err != nil:
		return f, cli.Usagef("%v", err)
	case fs.NArg() > 0:
		return f, cli.Usagef("state takes no arguments, got %q", fs.Args())
	}
	return f, nil
}

// cmdState prints the example shop's state in the running local stack.
func cmdState(ctx context.Context, args []string, stdout, _ io.Writer) error {
	f, err := parseState(args, stdout)
	if err != nil {
		return err
	}
	stack, err := cli.LocalStack(f.stateFile)
	if err != nil {
		return err
	}
	return printState(ctx, stack, f.asJSON, stdout)
}

// printState reads the shop's state on stack and prints it, as JSON when
// asJSON is set.
func printState(ctx context.Context, stack cli.Stack, asJSON bool, w io.Writer) error {
	table := stack.Tables["ShopTable"]
	if table == "" {
		return fmt.Errorf("the running stack has no ShopTable (is it in template.yaml?)")
	}
	state, err := shop.New(shop.Config{Table: table}, dynamodb.NewFromConfig(stack.AWS), nil, nil).State(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(state)
	}
	printShopState(w, table, state)
	return nil
}

// printShopState prints s, the state of the shop whose table is table.
func printShopState(w io.Writer, table string, s shop.State) {
	fmt.Fprintf(w, "Shop state (table %s)\n", table)
	fmt.Fprintf(w, "\nAccess: %d\n", len(s.Access))
	for _, a := range s.Access {
		if a.Active {
			fmt.Fprintf(w, "  %-30s active   from %s\n", a.Holder, strings.Join(a.Sources, ", "))
		} else {
			fmt.Fprintf(w, "  %-30s inactive\n", a.Holder)
		}
	}
	fmt.Fprintf(w, "\nEntitlements (one per purchase or subscription): %d\n", len(s.Entitlements))
	for _, e := range s.Entitlements {
		active := "inactive"
		if e.Active {
			active = "active"
		}
		fmt.Fprintf(w, "  %-30s %-8s %s %s (event %s)\n", e.Holder, active, e.Source, e.SourceID, e.Version.EventID)
	}
	fmt.Fprintf(w, "\nSubscriptions: %d\n", len(s.Subscriptions))
	for _, sub := range s.Subscriptions {
		fmt.Fprintf(w, "  %-22s %-10s customer %s (read from Stripe for event %s)\n", sub.ID, sub.Status, sub.Customer, sub.Version.EventID)
	}
	fmt.Fprintf(w, "\nEmails sent: %d\n", len(s.Emails))
	for _, e := range s.Emails {
		fmt.Fprintf(w, "  %-8s to %s (event %s)\n", e.Template, e.To, e.Event)
	}
	fmt.Fprintf(w, "\nInvoices created: %d\n", len(s.Invoices))
	for _, i := range s.Invoices {
		fmt.Fprintf(w, "  %-22s customer %s (event %s)\n", i.InvoiceID, i.Customer, i.Event)
	}
	if len(s.Orders) > 0 {
		fmt.Fprintf(w, "\nOrders (Adyen, GoPay, Paddle, Mollie): %d\n", len(s.Orders))
		for _, o := range s.Orders {
			fmt.Fprintf(w, "  %-6s %-18s %-9s %d %s (reference %s)\n", o.Provider, o.Payment, o.Status, o.Amount, o.Currency, o.Reference)
		}
	}
	if len(s.Stock) > 0 {
		fmt.Fprintf(w, "\nStock change per SKU (Shopify): %d\n", len(s.Stock))
		for _, l := range s.Stock {
			fmt.Fprintf(w, "  %-22s %d\n", l.ID, l.Amount)
		}
	}
	if len(s.Loyalty) > 0 {
		fmt.Fprintf(w, "\nLoyalty points per customer (Shopify): %d\n", len(s.Loyalty))
		for _, l := range s.Loyalty {
			fmt.Fprintf(w, "  %-22s %d\n", l.ID, l.Amount)
		}
	}
	if len(s.Entitlements)+len(s.Subscriptions)+len(s.Emails)+len(s.Invoices)+len(s.Orders)+len(s.Stock) == 0 {
		fmt.Fprintln(w, "\n"+strings.TrimSpace(`
Nothing yet. Send an event: hookinbox send stripe checkout.session.completed`))
	}
}
