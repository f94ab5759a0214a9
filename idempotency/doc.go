// Package idempotency runs a side effect at most once per idempotency key
// and payload, and answers every retry with the first attempt's response:
// the executeOnce service behind the Idempotency-Key header of SubmitOrder
// (the IETF draft "The Idempotency-Key HTTP Header Field", and Stripe's
// API). It imports no Azure package: package cosmos implements its [Store]
// (cosmos.KeyStore), package idemtest keeps one in memory.
//
// # Keys and records
//
// A key belongs to a [Scope]: the client that sent it, the operation it
// guards and the key itself. Each scope has one [Record], whose id is
// [Scope.ID], holding the payload's fingerprint (RequestHash), a [State],
// the stored [Response], timestamps and a time to live (TTL, 24 h by
// default: a key can be reused for another request once it expired).
//
// # The state machine
//
//	(none) --claim--> started --work ok-----------> succeeded (response replayed)
//	                     |    --ClientError-------> failed    (response replayed)
//	                     |    --other error-------> (none)    (released: a retry runs the work)
//	                     +--lease ended, take-over--> started (new owner, new ETag)
//
// Claiming a key is creating its record: of concurrent requests, the store
// lets exactly one create it ([ErrExists] for the others). The others read
// the record and judge it: another fingerprint is [Mismatched]; a finished
// record is [Replayed]; a started one is [InFlight] until its lease ends.
//
// # Fencing
//
// Every later write is conditional on the ETag of the version the writer
// claimed or read. Completing the key replaces the record on the claim's
// ETag; if another request took the key over meanwhile, the ETag changed,
// the store refuses ([ErrFenced]) and the newer attempt's record stays: an
// attempt whose lease ran out can never overwrite the one that replaced it.
//
// # Take-over
//
// An attempt that dies between claiming and completing (a crash, a host
// restart, a completion that never reached the store) leaves its record
// started. Once its lease ([Service.Lease]) has ended, the next request with
// the same key and payload replaces the record on the stale record's ETag,
// so of several such requests one takes it over, and runs the work again.
// The work must therefore tolerate a second attempt: SubmitOrder's creates
// the order, and a second attempt finds it created by the same submission
// and answers as the first would have (orders.SubmitResumed). The work runs under a deadline of one lease, so an attempt that
// hangs is fenced rather than running on beside its successor. Leases
// compare the clocks of different instances: a skew of a few seconds moves
// when a take-over may happen, never whether two attempts can both complete,
// which fencing decides.
//
// # Failures
//
// The work tells client errors from transient ones. A [ClientError] is the
// request's fault: its response is stored (state failed) and replayed, the
// same request being refused again anyway. Any other error releases the key
// (a delete conditional on the claim's ETag), so the retry runs the work
// again instead of waiting for the lease. So does a completion the store
// refused (throttled, unreachable): its answer was not stored, and the
// release, conditional on the same ETag, is fenced in the one case where
// the completion landed and only its answer was lost. Completing and
// releasing are tried even when the request's context ended meanwhile, each
// within [FinishTimeout] of its own, for the same reason.
//
// # Why a replay runs nothing
//
// A replay reads the stored response and returns it: the work is not
// called, and nothing is written. Neither is it for a mismatch or an
// in-flight key. Only a claim or a take-over runs the work, and the store's
// conditional writes let only one request do either for a given version of
// the record.
package idempotency
