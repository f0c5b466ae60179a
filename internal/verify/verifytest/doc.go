// Package verifytest builds signed webhook requests for tests in every
// package: the real provider payloads kept in the repository's
// testdata/<provider>/ folders, patched where a test needs (event ID,
// created, customer, subscription, status, size: the Stripe provider's
// Sample, and what only tests set), and the signature headers the
// providers would send with them.
//
// It signs with its own HMAC code, not the verifier's or the provider SDK's,
// and its tests cross-check the result against the provider SDK, so a test
// that passes with these builders passes with real deliveries. Output is
// deterministic: the same arguments give the same bytes. Every function is
// safe for concurrent use.
package verifytest
