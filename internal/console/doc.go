// Package console is `hookinbox console`: the inbox in a browser, on
// loopback, against the stack the CLI's inspect and replay reach. It
// serves server-rendered pages (html/template, embedded with the CSS and
// the little JavaScript that refreshes them): Events, one Event with its
// timeline and payload, Parked (the DLQ by reason and type), Destinations,
// Health and Personal data.
//
// It reads and changes the stack only through the stack it is given,
// which the CLI wires from the code of its own commands (inspect, replay,
// status, erase, export), each client limited to the calls that command
// makes. It writes nothing of its own anywhere.
//
// Guarantees:
//
//   - Only the browser that opened the printed URL gets an answer: every
//     request needs the per-run token as the first segment of its path
//     and the HttpOnly, SameSite=Strict cookie that opening the URL sets
//     (a secret derived from the token, sent only below its path). The
//     cookie alone opens nothing: browsers send cookies to every port of
//     127.0.0.1. A request whose Host is not the loopback address the
//     console listens on (DNS rebinding), or that a page of another site
//     or port started (Sec-Fetch-Site), is refused.
//   - Every POST needs the form's CSRF token and a same-origin Origin.
//     Every change (a replay, an erasure) is a POST that only a dry run
//     of the same request enables, once, within ten minutes: the dry run
//     comes first, then the confirmation.
//   - With ReadOnly the routes that change the stack, and their dry
//     runs, do not exist.
//   - Pages are never framed, cached or sent with a Referer; every value
//     is escaped by html/template, and no script but the console's own
//     runs (Content-Security-Policy).
//   - One change runs at a time, in the background, with its progress on
//     its own page; the console's own reads of the DLQ wait for it.
//
// A Server is safe for concurrent use.
package console
