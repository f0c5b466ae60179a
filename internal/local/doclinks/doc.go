// Package doclinks holds the test that every relative link in the
// repository's Markdown files reaches a file that exists, and every
// #anchor a heading of the page it names (GitHub's heading anchors), so a
// page moved or a heading renamed breaks `make test` instead of a reader's
// click. It has no code of its own.
package doclinks
