// Package local is the fence: everything under internal/local serves only
// local runs and tests, and nothing that ships imports it.
//
// What ships is the rest of internal/ plus the public packages at the
// module root (webhook, effects, the providers, the fn packages): the
// Lambda functions under functions/ link only those; catalog, which maps
// every function to its builder for local runs, is behind the fence. Under this folder live the
// emulator harness and the one local stack that `hookinbox dev`, the
// pipeline tests and the CLI's end-to-end test drive (devstack for the
// emulators, pipeline for the Stack; devstacktest and pipelinetest hold
// the test helpers), the Lambda runtime emulator driver (lambdalocal), the
// stateful stand-ins for outside APIs (standin), the template reader
// (samtemplate), the template's invariants (deploytest), `hookinbox chaos`
// (chaos), the floor program the performance work measures against
// (floor) and the check of the Markdown pages' links (doclinks).
//
// The rule is checked by internal/local/catalog's tests: no function
// links a package under internal/local, nor package testing.
package local
