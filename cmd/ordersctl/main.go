// Command ordersctl is the operators' tool for the order consumer: it lists
// and shows parked and dead-lettered messages and what the store holds for an
// order.
//
// parked list and show read Azure Service Bus (the parking queue and the
// orders queue's dead-letter sub-queue, peeked, with Entra ID) when a
// namespace is given, else the local host emulator's files (`make run`,
// testbed/hostemu writes them under .local/hostemu); parked resubmit works
// against Azure; order show reads Cosmos DB locally or in Azure; send sends
// by the producer package's rule to Azure, or appends to a local stream file.
// parked resubmit --dead-letter redrives the orders queue's dead-letter
// sub-queue the same way.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Exit codes scripts can rely on.
const (
	exitOK       = 0
	exitError    = 1 // the command failed (unreadable files, bad data)
	exitUsage    = 2 // wrong arguments
	exitNotFound = 3 // `parked show` matched nothing
)

const usage = `ordersctl: inspect the order consumer's parked and dead-lettered messages.

Usage:
  ordersctl parked list [--namespace NS | --local DIR] [--reason R] [--order ID] [--output table|json]
  ordersctl parked show [--namespace NS | --local DIR] [--output table|json] <orderId or messageId>
  ordersctl parked resubmit --namespace NS [--dead-letter] [--reason R]... [--max N] [--dry-run]
  ordersctl order show [--local DIR] [--output table|json] <orderId>
  ordersctl send [--status] [--dry-run] [--namespace NS | --stream FILE] <body.json>

Sources: with --namespace (or SERVICEBUS_FULLY_QUALIFIED_NAMESPACE), the parking queue
orders-deadletter and orders/$deadletterqueue, peeked (up to 1000 each) with Microsoft Entra ID
(az login). Otherwise (local mode, after ` + "`make run`" + `): DIR/orders-deadletter.jsonl (the parking queue, one
envelope per line, contract §6) and DIR/orders.deadletter.jsonl (the broker's dead-letter queue).
order show reads Cosmos DB from COSMOS_ENDPOINT, COSMOS_DATABASE (shop), COSMOS_CONTAINER (orders)
with Microsoft Entra ID (az login), or COSMOS_KEY for a local emulator. parked resubmit sends
each parked message of the chosen reasons (default RetryBudgetExhausted) back to orders with the
contract §3 MessageId plus ":r<unix time>" and its Subject, then completes it (peek-lock, send, complete: a crash
leaves at worst a duplicate); others stay parked. With --dead-letter it redrives orders'
dead-letter sub-queue instead (every reason unless --reason).

Examples:
  ordersctl parked list
  ordersctl parked list --reason RetryBudgetExhausted --output json | jq length
  ordersctl parked show ORD-2026-000123
  ordersctl parked resubmit --namespace sb-x.servicebus.windows.net --dry-run
  ordersctl send --namespace sb-x.servicebus.windows.net bicep/deploy/sample-order.json
  COSMOS_ENDPOINT=https://acct.documents.azure.com:443/ ordersctl order show ORD-2026-000123

Exit codes: 0 done, 1 failed, 2 usage, 3 nothing matched.
`

var errUsage = errors.New("usage")

// usageErr keeps -h a request for help and makes any other flag error a
// usage error.
func usageErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}

type notFoundError struct{ what string }

func (e *notFoundError) Error() string { return "no parked message for " + e.what }

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the whole program, so tests start it in process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, getenv, stdout)
	var nf *notFoundError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "ordersctl: %v\n\n%s", err, usage)
		return exitUsage
	case errors.As(err, &nf):
		fmt.Fprintln(stderr, "ordersctl:", err)
		return exitNotFound
	default:
		fmt.Fprintln(stderr, "ordersctl:", err)
		return exitError
	}
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return flag.ErrHelp
	}
	if args[0] == "send" {
		return send(ctx, args[1:], getenv, stdout)
	}
	if len(args) >= 2 && args[0] == "order" && args[1] == "show" {
		return orderShow(ctx, args[2:], getenv, stdout)
	}
	if args[0] != "parked" || len(args) < 2 {
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	switch args[1] {
	case "list":
		return parkedList(ctx, args[2:], getenv, stdout)
	case "show":
		return parkedShow(ctx, args[2:], getenv, stdout)
	case "resubmit":
		return parkedResubmit(ctx, args[2:], getenv, stdout)
	default:
		return fmt.Errorf("%w: unknown command parked %q", errUsage, args[1])
	}
}
