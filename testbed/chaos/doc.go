// Package chaos runs the order consumer under faults: the Cosmos faults of
// testbed/faults, a broker run through the local Functions host emulator
// that kills the handler, the HTTP API's clients, and the checks that the
// consumer's invariants held.
package chaos
