// Package chaos is the duplicate-proof test a team runs on its own
// integration: deliver every event of a day several times, in shuffled
// order, from concurrent senders, with SQS's own duplicate messages on
// top, wait until the pipeline is quiet, and compare the business state and
// the effect ledger with a reference run of one in-order delivery on a
// fresh stack. `hookinbox chaos` is its command.
//
// A Target is a pipeline to deliver to and read back: Local is a fresh
// stack of template.yaml on the local emulators with the functions
// in-process (lambdafn, as in Lambda) and the SES and Stripe stand-ins.
// Run delivers, Snapshot reads, Compare says what differs. Deliveries are
// signed as the provider signs them; a delivery answered 5xx or not at all
// is retried, as Stripe retries, until it is answered 2xx or 4xx.
//
// Everything here is safe for concurrent use unless a comment says not.
package chaos

// CorpusHelp says, for `hookinbox chaos --help`, what a corpus holds
// (ReadEvents) and what Generate writes.
const CorpusHelp = `FILE.jsonl holds one Stripe event a line, as GET /v1/events lists them, or
whole pages of that list, or another provider's delivery:
{"object":"hookinbox.delivery","provider":"shopify","id":"<event id>",
"type":"orders/paid","body":{...}} (github, shopify, standard, adyen), or
an id-only provider's notification (gopay, mollie) whose body is the
object its API serves:
{"object":"hookinbox.delivery","provider":"gopay","id":"<payment id>",
"type":"notification","body":{"id":<payment id>,"state":"PAID",...}}.
To test your own events:

  curl -G https://api.stripe.com/v1/events -u "$STRIPE_KEY:" -d limit=100 \
    | jq -c '.data[]' > events.jsonl
  hookinbox chaos --events events.jsonl

--generate N writes a realistic corpus of N events to stdout instead
(checkouts, subscription changes out of order, delayed payments, refunds,
types nobody handles, Shopify orders, Adyen payments and refunds, GoPay
payments, GitHub and Standard Webhooks deliveries).`

// ProxiedHelp names, for `hookinbox chaos --help`, what a fault's proxies
// stand between the functions and (the Proxy constants).
const ProxiedHelp = "DynamoDB, SQS, Stripe, SES and GoPay"
