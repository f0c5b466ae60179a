// Package github is hookinbox's GitHub provider: hooks verified in
// X-Hub-Signature-256, as JSON or form-encoded, keyed github#<delivery
// id>, typed by the unsigned X-GitHub-Event header (never a metric
// dimension as it is); the hooks' recent deliveries as the reconciler's
// source, a delivery claimed only when it never arrived. Sender is its
// test deliveries, for tools. Safe for concurrent use.
package github
