package localrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/httpapi"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// sampleOrder is the order the printed curl examples send, relative to the
// app root.
const sampleOrder = "bicep/deploy/sample-order.json"

// Serve runs the handler under the host emulator with the HTTP listener and
// the queue but no stream, until ctx ends (make serve): requests reach the
// app's HTTP functions, their Service Bus outputs land on the queue, and the
// queue's functions consume them. It prints the base URL and a curl example
// per route to stdout once the listener is open, and the queue's counts at
// the end. Nothing is checked: there is no stream to check against.
func Serve(ctx context.Context, opts Options, stdout io.Writer) error {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.HTTPAddr == "" {
		return errors.New("serving needs the HTTP listener: give -http-addr")
	}
	if len(opts.Messages) > 0 {
		return errors.New("serving takes no stream")
	}
	opts.Resume = false // a session writes its own files
	ss, err := openSession(ctx, opts, true)
	if err != nil {
		return err
	}
	defer ss.close(opts.KeepDatabase)
	proxy, err := holdProxy(ss, opts.HoldKeyCompletions)
	if err != nil {
		return err
	}
	rc := ss.rigConfig(opts, ss.handlerLog, func(inv *hostemu.Invocation) {
		if opts.Verbose || !inv.OK() {
			ss.logInvocation(inv)
		}
	})
	rc.Proxy, rc.Serve = proxy, true
	rc.HTTPOptional = false // a session without its listener serves nothing
	rc.Listening = func(base string, routes []hostemu.HTTPRoute) {
		printServing(stdout, base, routes, ss, opts)
	}
	res, err := ss.deliver(ctx, rc)
	if err != nil {
		return err
	}
	q := res.Queue
	fmt.Fprintf(stdout, "\nstopped after %s: queue %s got %d messages, %d completed, %d dead-lettered, %d still outstanding; handler output in %s\n",
		res.Elapsed.Round(1e9), ss.fns[0].ServiceBusQueue(), q.Sent, q.Completed, q.DeadLettered, q.Outstanding, ss.files.path("handler.log"))
	if opts.KeepDatabase || !ss.db.fresh {
		fmt.Fprintf(stdout, "database %s kept\n", ss.db.name)
	}
	return nil
}

// holdProxy is the proxy that holds key completions for at most d, or nil
// when d is not positive.
func holdProxy(ss *session, d time.Duration) (*faults.ProxyConfig, error) {
	if d <= 0 {
		return nil, nil
	}
	deadline := httpapi.DefaultSubmitDeadline // cmd/handler's SUBMIT_DEADLINE default
	if v, ok := ss.settings.Get("SUBMIT_DEADLINE"); ok && v != "" {
		var err error
		if deadline, err = time.ParseDuration(v); err != nil {
			return nil, fmt.Errorf("SUBMIT_DEADLINE %q: %w", v, err)
		}
	}
	if d >= deadline {
		return nil, fmt.Errorf("holding key completions for %s would outlast SUBMIT_DEADLINE (%s): the held request would answer 503", d, deadline)
	}
	keys, _ := ss.settings.Get("IDEMPOTENCY_CONTAINER")
	if keys == "" {
		keys = cosmos.KeyContainer
	}
	return newCompletionHold(keys, d, ss.logf).proxy(), nil
}

// printServing tells the developer where the app listens and how to call it.
func printServing(w io.Writer, base string, routes []hostemu.HTTPRoute, ss *session, opts Options) {
	fmt.Fprintf(w, "serving %s on %s; Cosmos database %s (%s); queue %s consumed by %s\n",
		ss.app.Root, base, ss.db.name, ss.db.endpoint, ss.fns[0].ServiceBusQueue(), functionNames(ss.fns))
	if len(routes) == 0 {
		fmt.Fprintln(w, "the app has no httpTrigger function: nothing to call yet")
	}
	sample := ""
	if _, err := os.Stat(filepath.Join(ss.app.Root, sampleOrder)); err == nil {
		sample = sampleOrder
	}
	for _, r := range routes {
		fmt.Fprintf(w, "\n  %s\n    %s\n", r, curlExample(base, r, sample, firstKey(opts.FunctionKeys)))
	}
	if opts.HoldKeyCompletions > 0 {
		fmt.Fprintf(w, "\neach idempotency key's completion waits until another request reads its record (at most %s): a second request with a key meets the first in flight\n", opts.HoldKeyCompletions)
	}
	fmt.Fprintln(w, "\nthe host's lines go to stderr (-v: every invocation); Ctrl-C stops the listener and the handler")
}

var routeParam = regexp.MustCompile(`\{\*{0,2}([^}:?=]+)[^}]*\}`)

// curlExample is one request a developer can paste: the route's first
// method, its parameters filled in, the sample order as the body of a
// POST, PUT or PATCH, an Idempotency-Key on a POST, the key when asked for.
func curlExample(base string, r hostemu.HTTPRoute, sample, key string) string {
	method := "GET"
	if len(r.Methods) > 0 {
		method = r.Methods[0]
	}
	path := routeParam.ReplaceAllStringFunc(r.Path, func(p string) string {
		if strings.Contains(strings.ToLower(p), "orderid") {
			return "ORD-2026-000123"
		}
		return routeParam.FindStringSubmatch(p)[1]
	})
	args := []string{"curl -i"}
	if method != "GET" {
		args = append(args, "-X "+method)
	}
	if r.Keyed {
		args = append(args, "-H 'x-functions-key: "+key+"'")
	}
	switch method {
	case "POST", "PUT", "PATCH":
		if method == "POST" {
			args = append(args, "-H 'Idempotency-Key: demo-1'")
		}
		data := "'{}'"
		if sample != "" {
			data = "@" + sample
		}
		args = append(args, "-H 'Content-Type: application/json'", "--data "+data)
	}
	return strings.Join(append(args, base+path), " ")
}

// firstKey is the value of the key named "default", else of the first
// name in order: the one the curl lines show.
func firstKey(keys map[string]string) string {
	if v, ok := keys["default"]; ok {
		return v
	}
	if names := slices.Sorted(maps.Keys(keys)); len(names) > 0 {
		return keys[names[0]]
	}
	return ""
}

func functionNames(fns []*hostemu.Function) string {
	names := make([]string, len(fns))
	for i, fn := range fns {
		names[i] = fn.Name
	}
	return strings.Join(names, ", ")
}
