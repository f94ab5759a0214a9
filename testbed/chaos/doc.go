// Package chaos is make chaos: it runs the order consumer on the rig
// (testbed/rig) under the faults of testbed/faults, with the HTTP API's
// clients and the faults aimed at their key records beside the queue, and
// judges the run with testbed/verify.
package chaos
