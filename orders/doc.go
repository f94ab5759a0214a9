// Package orders is the domain of the order consumer: what an order message
// is, when two deliveries are the same order, and what each delivery amounts
// to. It imports neither Azure nor HTTP; package cosmos implements its
// [Store] and [StatusStore], and package handler feeds it the messages the
// Functions host delivers.
//
// # Orders
//
// An [Order] is a message body that passed the rules of docs/contract.md §3:
// [ParseOrder] decodes and validates it, keeping every top-level member as
// sent, unknown ones included, so the stored document and the fingerprint see
// exactly what the producer sent. Its orderId is the deduplication key, the
// Cosmos DB id and the partition key value. A [StatusChange] is the other
// message type ([ParseMessageType] tells them apart by the Service Bus
// Subject): an order's whole status at a version, applied only when newer.
//
// # The fingerprint
//
// Two deliveries with the same orderId are the same order when their
// fingerprints match. The rule is [Fingerprint] under [HashVersion]
// (docs/contract.md §4: SHA-256 of the RFC 8785 canonical form of the body
// without "meta"); the version is stored beside every hash, so a later rule
// still recognises orders accepted under an earlier one.
//
// # Outcomes
//
// [Processor.Process] turns one delivery into a [Result] whose [Outcome] is
// one of those of docs/contract.md §5: [Created], [Duplicate], [Mismatch],
// [Invalid], [Transient], [Exhausted], and for status changes [Applied] and
// [Stale]. Creating the order is the duplicate check ([Store.CreateOrder]
// returns the stored fingerprint when the order exists), so a new order costs
// one write. [Outcome.Completes] says whether the broker may complete the
// message, [Outcome.Parks] whether it goes to the parking queue with a
// [Reason]. Errors say what the broker needs: a [RejectError] is final for
// the body, a [StoreError] says whether retrying may help
// ([StoreError.Transient], [IsTransient]).
//
// # Submissions
//
// The HTTP API decides an order in the request by the same rules:
// [Processor.Admit] refuses what Process would refuse, and [Processor.Submit]
// creates the order for a [Submission] (its owner, the request) with the
// same one batch, deciding from the stored order when it exists: created,
// this very submission's ([SubmitResumed]), a resend of its owner, or taken
// by another. Only an order's owner is shown it, as its [PublicView].
package orders
