// Command ordersctl is the operators' tool for the order consumer: it lists,
// shows, completes and resubmits parked and dead-lettered messages, shows
// what the store holds for an order, and sends an order as a producer must.
//
// With a namespace (--namespace or SERVICEBUS_FULLY_QUALIFIED_NAMESPACE) it
// works on Azure Service Bus with Microsoft Entra ID; with the Service Bus
// emulator's connection string (--connection-string or
// SERVICEBUS_CONNECTION_STRING, local/compose.yaml) on the emulator; without
// either, on the files the local host emulator keeps under .local/hostemu
// (`make run`, testbed/hostemu), which stand for the same queues. Cosmos DB is read from
// COSMOS_ENDPOINT in both. docs/runbook.md is the operator's guide.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"
)

// Exit codes scripts can rely on (docs/runbook.md, ordersctl).
const (
	exitOK       = 0
	exitError    = 1 // the command failed, or some message was not settled
	exitUsage    = 2 // wrong arguments (no namespace and no local files too), or a change asked for no confirmation off a terminal
	exitNotFound = 3 // nothing matched the orderId, messageId or sequence number given, or a change's filter
	exitDeclined = 4 // the operator answered no: nothing was changed
)

// cli is the program's surroundings, so tests run it in process.
type cli struct {
	getenv         func(string) string
	stdout, stderr io.Writer
	// progress receives the progress bar of bulk work; nil (tests, pipes)
	// draws none.
	progress io.Writer
	// confirm asks the operator a yes/no question; nil when stdin is not a
	// terminal, and then a change needs --yes.
	confirm func(question string) bool
}

func main() {
	c := &cli{getenv: os.Getenv, stdout: os.Stdout, stderr: os.Stderr}
	if term.IsTerminal(int(os.Stderr.Fd())) {
		c.progress = os.Stderr
	}
	if term.IsTerminal(int(os.Stdin.Fd())) {
		in := bufio.NewReader(os.Stdin)
		c.confirm = func(q string) bool {
			fmt.Fprintf(os.Stderr, "%s [y/N] ", q)
			answer, _ := in.ReadString('\n')
			answer = strings.ToLower(strings.TrimSpace(answer))
			return answer == "y" || answer == "yes"
		}
	}
	// Ctrl-C ends the work in progress: settled messages stay settled, the
	// ones locked and not yet settled are abandoned.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], c)
	stop()
	os.Exit(code)
}

// command is one subcommand with its help.
type command struct {
	name     string // "parked list"
	synopsis string // the arguments after the name
	about    string
	examples []string
	run      func(ctx context.Context, c *cli, cmd *command, args []string) error
}

// commands are dispatched by their name's words; "parked delete" is an alias.
var commands = []*command{parkedListCmd, parkedShowCmd, parkedCompleteCmd, parkedResubmitCmd, orderShowCmd, sendCmd}

const overview = `ordersctl: operate the order consumer: parked and dead-lettered messages, stored orders.

Commands:
  parked list       every parked and dead-lettered message (three queues, see --from), filtered
  parked show       one parked message in full; for a HashMismatch, what changed
  parked complete   remove parked messages once dealt with (alias: parked delete)
  parked resubmit   send parked messages back to orders, then complete them
  order show        what Cosmos DB holds for an order, and its parked messages
  send              send an order (or status change) as a producer must

Where: --namespace NS (or SERVICEBUS_FULLY_QUALIFIED_NAMESPACE) works on Azure Service Bus with
Microsoft Entra ID (az login); --connection-string CS (or SERVICEBUS_CONNECTION_STRING) on the
Service Bus emulator of local/compose.yaml (UseDevelopmentEmulator=true); without either, on the
local host emulator's files (--local, default .local/hostemu, written by make run).
Queues (--from): parking, deadletter (orders/$deadletterqueue), parked-deadletter (the parking
queue's own dead-letter queue). Cosmos DB: COSMOS_ENDPOINT, COSMOS_DATABASE (shop),
COSMOS_CONTAINER (orders), Entra ID, or COSMOS_KEY for a local emulator.

Every command takes --help (with examples) and --output table|json; every change takes --dry-run
and asks for confirmation (--yes).

Exit codes: 0 done, 1 failed (or some message not settled), 2 usage (also: no namespace and no
local files), 3 nothing matched (a change's selection too), 4 declined at the confirmation prompt.
`

// help is a command's --help text, flags included.
func (cmd *command) help(fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: ordersctl %s %s\n\n%s\n\nFlags:\n", cmd.name, cmd.synopsis, cmd.about)
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	b.WriteString("\nExamples:\n")
	for _, e := range cmd.examples {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	return b.String()
}

// helpRequest carries the help text asked for with -h or --help.
type helpRequest struct{ text string }

func (h *helpRequest) Error() string { return "help requested" }

// usageError is a wrong invocation of cmd (nil: of ordersctl itself).
type usageError struct {
	cmd *command
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd *command, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// parse parses args into fs, turning -h into cmd's help and any other flag
// error into a usage error.
func parse(cmd *command, fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return &helpRequest{text: cmd.help(fs)}
	default:
		return usagef(cmd, "%v", err)
	}
}

type notFoundError struct{ what string }

func (e *notFoundError) Error() string { return "nothing matched " + e.what }

// errDeclined is the operator's "no" at a confirmation prompt.
var errDeclined = errors.New("not confirmed: nothing was changed")

// run is the whole program, so tests start it in process.
func run(ctx context.Context, args []string, c *cli) int {
	err := dispatch(ctx, args, c)
	var (
		help  *helpRequest
		usage *usageError
		nf    *notFoundError
		// noLocal is a usage error found only once the command runs.
		noLocal *noLocalQueuesError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &help):
		fmt.Fprint(c.stdout, help.text)
		return exitOK
	case errors.As(err, &usage):
		if usage.cmd == nil {
			fmt.Fprintf(c.stderr, "ordersctl: %v\n\n%s", err, overview)
		} else {
			fmt.Fprintf(c.stderr, "ordersctl %s: %v\nUsage: ordersctl %s %s (--help for more)\n", usage.cmd.name, err, usage.cmd.name, usage.cmd.synopsis)
		}
		return exitUsage
	case errors.As(err, &noLocal):
		fmt.Fprintf(c.stderr, "ordersctl: %v\n", err)
		return exitUsage
	case errors.As(err, &nf):
		fmt.Fprintln(c.stderr, "ordersctl:", err)
		return exitNotFound
	case errors.Is(err, errDeclined):
		fmt.Fprintln(c.stderr, "ordersctl:", err)
		return exitDeclined
	default:
		fmt.Fprintln(c.stderr, "ordersctl:", err)
		return exitError
	}
}

func dispatch(ctx context.Context, args []string, c *cli) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return &helpRequest{text: overview}
	}
	for _, cmd := range commands {
		words := strings.Fields(cmd.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == cmd.name {
			return cmd.run(ctx, c, cmd, args[len(words):])
		}
	}
	if len(args) >= 2 && args[0] == "parked" && args[1] == "delete" {
		return parkedCompleteCmd.run(ctx, c, parkedCompleteCmd, args[2:])
	}
	return usagef(nil, "unknown command %q", strings.Join(args[:min(2, len(args))], " "))
}
