// Package inbox is hookinbox's claim and lease store: one small status item
// per event, carrying the raw payload when it is small, or with the
// payload stored once beside it.
//
// Every state change is one conditional write, so the database decides:
// two receivers racing on the same event get one claim, two processors
// racing on one claim get one lease, and a worker that lost its lease can
// never overwrite the new owner's result. Nothing reads before it writes;
// reads happen only after a condition failed, to say why.
//
// Store is implemented by DynamoDB (NewDynamoDB) and, for fast unit tests,
// by inboxtest's in-memory store, which keeps the same rules (Renewable,
// LeaseRefusal, ...); one conformance suite (inboxtest) runs on both so
// they cannot drift. Both are safe for concurrent use.
//
// The status item lives at (pk = "<provider>#<event id>", sk = "event");
// a payload inside it, compressed (attribute payload_deflate), when the
// event's three writes of the item then cost no more write units than a
// payload item of its own would add (one unit a write under about 2 KiB,
// two for 2-5 KiB, see inline.go); a larger payload at (pk, sk =
// "payload"); one over MaxPayloadBytes in S3 (Bodies, bodies.go), the
// object named by the status item (attribute payload_object). The sparse pending index projects the status attributes
// only (PendingAttributes), never the payload. Other packages may keep per-event items in the same
// partition under other sort keys (the effect ledger uses
// "effect#<name>").
package inbox
