// Package doclinks holds the tests that keep the docs true and short:
// every relative link in the repository's Markdown files reaches a file
// that exists, and every #anchor a heading of the page it names (GitHub's
// heading anchors); every alarm of template.yaml has its runbook section
// in docs/operations.md; and docs/ and README.md stay within their line
// budgets. So a page moved, a heading renamed or a page grown past its
// budget breaks `make test` instead of a reader's click. It has no code of
// its own.
package doclinks
