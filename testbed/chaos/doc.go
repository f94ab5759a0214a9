// Package chaos is make chaos: it runs the order consumer on the rig
// (testbed/rig) under the faults of testbed/faults, with the HTTP API's
// clients and the faults aimed at their key records beside the queue, and
// checks the run with testbed/verify. Its Report is the one report of a
// run: make run (testbed/localrun) fills and prints it too.
package chaos
