package localrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/rig"
)

// session is what a run and a serve session share: the app and its
// settings, the functions the queue feeds, the handler executable, the
// database and the output files.
type session struct {
	app        *hostemu.App
	settings   *hostemu.Settings
	fns        []*hostemu.Function
	exe        string
	db         *ordersDB
	files      *outFiles
	handlerLog *os.File

	logMu sync.Mutex // the worker, the listeners and Observe all log
	log   io.Writer
}

// openSession reads the app and its settings and opens the database (a
// named one may hold orders only when mayHoldOrders) and the output files
// (appended to when opts.Resume).
func openSession(ctx context.Context, opts Options, mayHoldOrders bool) (_ *session, err error) {
	s := &session{log: opts.Log}
	if s.app, err = hostemu.LoadApp(opts.AppRoot); err != nil {
		return nil, err
	}
	s.settings = hostemu.NewSettings(opts.Environ)
	if opts.LocalSettings != "" {
		if _, err := s.settings.LoadLocalSettings(opts.LocalSettings); err != nil {
			return nil, err
		}
	}
	for _, kv := range opts.Settings {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("setting %q is not KEY=VALUE", kv)
		}
		s.settings.Set(k, v)
	}
	if s.fns, err = selectFunctions(s.app, s.settings, opts.Functions); err != nil {
		return nil, err
	}
	if s.exe, err = s.app.Executable(opts.Executable); err != nil {
		return nil, err
	}
	if s.db, err = openDatabase(ctx, s.settings, opts.Database, mayHoldOrders); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.close(opts.KeepDatabase)
		}
	}()
	if s.files, err = newOutFiles(opts.OutDir, opts.Resume); err != nil {
		return nil, err
	}
	if !opts.Resume {
		s.files.removeStale()
	}
	if s.handlerLog, err = os.Create(s.files.path("handler.log")); err != nil {
		return nil, err
	}
	return s, nil
}

// close closes the files and deletes a fresh database unless keepDB.
func (s *session) close(keepDB bool) {
	if s.handlerLog != nil {
		_ = s.handlerLog.Close()
	}
	if s.files != nil {
		_ = s.files.close()
	}
	s.db.close(keepDB)
}

func (s *session) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, "hostemu: "+format+"\n", args...)
}

// rigConfig is the rig's configuration a run and a serve session share:
// the app, the queue's and the host's settings, the outbox publisher, the
// output files, and the HTTP listener as the options ask for it (none
// without opts.HTTPAddr); observe receives every queue invocation.
func (s *session) rigConfig(opts Options, handlerOutput io.Writer, observe func(*hostemu.Invocation)) rig.Config {
	rc := rig.Config{
		App: s.app, Functions: s.fns, Executable: s.exe, Settings: s.settings, Messages: opts.Messages,
		MaxDeliveryCount: opts.MaxDeliveryCount, DuplicateDetection: opts.DuplicateDetection,
		MaxConcurrentCalls: opts.MaxConcurrentCalls, MaxMessageBatchSize: opts.MaxMessageBatchSize,
		BatchesInFlight: opts.BatchesInFlight, Clocks: opts.Clocks, Outages: opts.Outages,
		HandlerOutput: handlerOutput, ServiceBusOut: s.files.serviceBus, Observe: observe, Publisher: true,
		Log: func(line string) { s.logf("%s", line) },
	}
	if opts.HTTPAddr == "" {
		return rc
	}
	rc.HTTPAddr, rc.FunctionKeys, rc.HTTPOptional = opts.HTTPAddr, opts.FunctionKeys, opts.HTTPOptional
	rc.ObserveHTTP = func(inv *hostemu.Invocation) {
		if opts.Verbose { // the host logs failures itself
			s.logMu.Lock()
			printHTTPInvocation(s.log, inv)
			s.logMu.Unlock()
		}
	}
	rc.Listening = func(base string, routes []hostemu.HTTPRoute) {
		s.logf("HTTP triggers on %s (%d routes)", base, len(routes))
		for _, r := range routes {
			s.logf("  %s", r.String())
		}
	}
	return rc
}

// deliver runs the rig and files the dead letters it left; a delivery that
// failed is explained with the end of the handler's output.
func (s *session) deliver(ctx context.Context, rc rig.Config) (*rig.Result, error) {
	res, err := rig.Deliver(ctx, rc)
	if err != nil {
		return nil, fmt.Errorf("%w%s", err, tail(s.files.path("handler.log")))
	}
	if err := s.files.deadLetters(s.fns[0].ServiceBusQueue(), res.DeadLetters); err != nil {
		return nil, err
	}
	return res, nil
}

// logInvocation writes one queue invocation to the log (printInvocation).
func (s *session) logInvocation(inv *hostemu.Invocation) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	printInvocation(s.log, inv)
}

// printHTTPInvocation writes one HTTP invocation the way Core Tools logs it.
func printHTTPInvocation(w io.Writer, inv *hostemu.Invocation) {
	status := 0
	if inv.Response != nil {
		status = inv.Response.Status
	}
	if !inv.OK() {
		fmt.Fprintf(w, "[Error] %s %s %s -> %d: %s\n", inv.Function, inv.Request.Method, inv.Request.LogURL(), status, inv.Failure)
		return
	}
	for _, l := range inv.Logs {
		fmt.Fprintf(w, "[Information] %s\n", l)
	}
	fmt.Fprintf(w, "[Information] Executed 'Functions.%s' (Succeeded, Id=%s, Duration=%dms): %s %s -> %d\n",
		inv.Function, inv.ID, inv.Took.Milliseconds(), inv.Request.Method, inv.Request.LogURL(), status)
}
