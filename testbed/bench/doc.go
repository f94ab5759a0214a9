// Package bench measures the consumer against a Cosmos DB endpoint: round
// trips per message, throughput through the handler against a plain azcosmos
// loop, batch against single-message invocations, each at several distances
// to Cosmos (a delay proxy in front of the emulator), what executeOnce adds
// to each path of the HTTP API (SubmitOrder, GetOrder), and the
// footprint of the built executable. testbed/cmd/benchreport runs it and writes docs/evidence/benchmarks.md.
//
// Measurement only. Nothing the handler ships imports this package
// (TestProductionImportsOfAzcosmos checks it); it is the one place outside
// package cosmos that calls azcosmos, for the plain create loop the handler
// is compared with, and it gets its client from cosmos.NewClient so both
// sides share the same client settings.
package bench
