// Package retrying holds an invocation's store calls through throttling and
// outages: [Store] retries an [orders.Store]'s transient failures until the
// invocation's deadline, and [Health], a circuit breaker shared by every
// invocation of the process, lets one probe at a time reach a store that is
// down (docs/adr/0007-holding-through-outages.md).
package retrying
