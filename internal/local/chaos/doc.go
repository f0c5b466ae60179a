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
