package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hookinbox/hookinbox/internal/shop"
)

func cmdState(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("state", "[--json]", `
Prints the example shop's state in the running local stack: each holder's
access (the union of their entitlements), the entitlements (one per
purchase or subscription), subscriptions, emails sent and invoices created,
as recorded in its table (internal/shop). With --json, only JSON goes to
stdout.`)
	asJSON := fs.Bool("json", false, "print JSON only")
	stateFile := fs.String("state-file", defaultStateFile(), "state file of the running stack")
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("state takes no arguments, got %q", rest)
	}
	st, err := loadState(*stateFile)
	if err != nil {
		return err
	}
	table, err := st.table("ShopTable")
	if err != nil {
		return err
	}
	db, err := st.dynamoDB()
	if err != nil {
		return err
	}
	state, err := shop.New(shop.Config{Table: table}, db, nil, nil).State(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(state)
	}
	printShopState(stdout, table, state)
	return nil
}

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
