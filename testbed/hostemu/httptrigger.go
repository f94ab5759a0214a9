package hostemu

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"
)

// DefaultMaxRequestBodyBytes is the host's limit for an HTTP trigger's
// request body (100 MB); a larger one is answered 413.
const DefaultMaxRequestBodyBytes = 100 << 20

// maxBufferedBodyBytes bounds the request bodies the emulator holds at
// once: a request waits until its body fits.
const maxBufferedBodyBytes = 256 << 20

// reasonHeader tells a developer why the emulator refused a request where the
// host's own answer says nothing.
const reasonHeader = "X-Hostemu-Reason"

// HTTPOptions configure the HTTP API of a Host (the httpTrigger functions).
type HTTPOptions struct {
	// Functions are served when their trigger is an httpTrigger; the others
	// are left out.
	Functions []*Function
	// RoutePrefix goes before every route (host.json
	// extensions.http.routePrefix; nil: "api").
	RoutePrefix *string
	// FunctionKeys are the app's function keys, name -> value (the host
	// names the key it creates "default"). When there are any, callers of
	// function and admin level functions must present one, in
	// x-functions-key or the code query parameter, as in Azure, and the
	// handler is told its name (HTTPRequest.KeyName); none: keys are not
	// checked, as under Core Tools.
	FunctionKeys map[string]string
	// MaxRequestBodyBytes: 0 means DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// Observe is called once per invocation with its request and response.
	Observe func(*Invocation)
}

// HTTPFront serves the HTTP triggers of an app as the host does: it routes
// /<prefix>/<route> to the function, checks its key, posts the invocation to
// the handler and answers the caller from Outputs.<http output>.
type HTTPFront struct {
	host   *Host
	opts   HTTPOptions
	prefix []string
	routes []httpRoute
	bodies *semaphore.Weighted
}

type httpRoute struct {
	fn      *Function
	route   *Route
	methods []string // upper case; empty: every method
	keyed   bool     // authLevel function or admin
}

// HTTP returns the HTTP API for opts.Functions, invoking through h.
func (h *Host) HTTP(opts HTTPOptions) (*HTTPFront, error) {
	if opts.MaxRequestBodyBytes <= 0 {
		opts.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	prefix := "api"
	if opts.RoutePrefix != nil {
		prefix = *opts.RoutePrefix
	}
	f := &HTTPFront{host: h, opts: opts, bodies: semaphore.NewWeighted(max(maxBufferedBodyBytes, opts.MaxRequestBodyBytes))}
	if p := strings.Trim(prefix, "/"); p != "" {
		f.prefix = strings.Split(p, "/")
	}
	for _, fn := range opts.Functions {
		t := fn.Trigger()
		if t == nil || !strings.EqualFold(t.Type, "httpTrigger") {
			continue
		}
		template := t.Route
		if template == "" {
			template = fn.Name
		}
		r, err := ParseRoute(template)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fn.Name, err)
		}
		hr := httpRoute{fn: fn, route: r, keyed: !strings.EqualFold(t.AuthLevel, "anonymous")}
		for _, m := range t.Methods {
			hr.methods = append(hr.methods, strings.ToUpper(m))
		}
		f.routes = append(f.routes, hr)
	}
	return f, nil
}

// HTTPRoute is one served route, for a listing.
type HTTPRoute struct {
	Function string
	// Methods are upper case; empty means every method.
	Methods []string
	// Path is /<prefix>/<template>.
	Path string
	// Keyed: a function key is asked for (authLevel function or admin, and
	// HTTPOptions.FunctionKeys set).
	Keyed bool
}

func (r HTTPRoute) String() string {
	methods := strings.Join(r.Methods, ",")
	if methods == "" {
		methods = "*"
	}
	key := ""
	if r.Keyed {
		key = " (function key)"
	}
	return fmt.Sprintf("%s %s -> %s%s", methods, r.Path, r.Function, key)
}

// Routes lists the served routes in function order.
func (f *HTTPFront) Routes() []HTTPRoute {
	out := make([]HTTPRoute, 0, len(f.routes))
	for _, r := range f.routes {
		path := "/" + strings.Join(append(slices.Clone(f.prefix), strings.Trim(r.route.Template, "/")), "/")
		out = append(out, HTTPRoute{Function: r.fn.Name, Methods: r.methods, Path: path, Keyed: r.keyed && len(f.opts.FunctionKeys) > 0})
	}
	return out
}

// ServeHTTP answers one caller.
func (f *HTTPFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, params, reason := f.match(r)
	if route == nil {
		// The host's router answers 404 with no body, a known route with
		// another method included (azure-functions-host#10098).
		w.Header().Set(reasonHeader, reason)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	keyName, keyOK := f.keyName(r)
	if route.keyed && len(f.opts.FunctionKeys) > 0 && !keyOK {
		w.Header().Set(reasonHeader, "no valid function key in x-functions-key or code")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	req := HTTPRequest{Method: r.Method, URL: displayURL(r), RawQuery: r.URL.RawQuery, Header: r.Header, Host: r.Host,
		Params: params, RouteHasParams: route.route.hasParams(), KeyName: keyName}
	// Go's server keeps Transfer-Encoding out of Header, and a request built
	// in process may lack Content-Length; Kestrel lists both.
	if len(r.TransferEncoding) > 0 || r.ContentLength > 0 && r.Header.Get("Content-Length") == "" {
		req.Header = r.Header.Clone()
		if len(r.TransferEncoding) > 0 {
			req.Header["Transfer-Encoding"] = r.TransferEncoding
		} else {
			req.Header.Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		}
	}
	if r.ContentLength > 0 {
		if r.ContentLength > f.opts.MaxRequestBodyBytes {
			w.Header().Set(reasonHeader, fmt.Sprintf("body over the host's limit of %d bytes", f.opts.MaxRequestBodyBytes))
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		// Bodies wait for room in the budget, so that concurrent large
		// requests cannot take the emulator's memory.
		if err := f.bodies.Acquire(r.Context(), r.ContentLength); err != nil {
			return // the caller is gone
		}
		defer f.bodies.Release(r.ContentLength)
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		req.Body, req.HasBody = body, true
	}
	resp := f.invoke(r.Context(), route.fn, req)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// invoke runs one invocation and returns the caller's answer.
func (f *HTTPFront) invoke(ctx context.Context, fn *Function, req HTTPRequest) HTTPResponse {
	h := f.host
	inv := &Invocation{ID: newGUID(), Function: fn.Name, Started: time.Now(), Request: &req}
	// A caller that hangs up does not cancel the invocation: the handler's
	// work may finish after the caller gave up, the case a retrying client
	// must be safe against; functionTimeout still bounds it.
	a := h.call(context.WithoutCancel(ctx), fn, inv, h.opts.Encoder.HTTP(fn, req))
	resp := failedResponse()
	if inv.OK() {
		var err error
		if resp, err = httpResponse(httpOutput(fn, a)); err != nil {
			inv.Failure, resp = "output binding "+httpOutputName(fn)+": "+err.Error(), failedResponse()
		}
	}
	inv.Took = time.Since(inv.Started)
	inv.Response = &resp
	if !inv.OK() {
		h.opts.Log(fmt.Sprintf("%s invocation %s: %s %s failed, answered 500: %s", fn.Name, inv.ID, req.Method, req.LogURL(), inv.Failure))
	}
	if f.opts.Observe != nil {
		f.opts.Observe(inv)
	}
	return resp
}

// httpOutput is the value of the function's http output binding in the
// answer: Outputs.<name>, or ReturnValue for "$return".
func httpOutput(fn *Function, a Answer) ([]byte, bool) {
	name := httpOutputName(fn)
	if name == "$return" {
		return a.ReturnValue, len(a.ReturnValue) > 0
	}
	v, ok := a.Outputs[name]
	return v, ok
}

func httpOutputName(fn *Function) string {
	for _, b := range fn.Outputs() {
		if strings.EqualFold(b.Type, "http") {
			return b.Name
		}
	}
	return ""
}

// match finds the function a request is for: among the routes matching its
// path and method, the one the router ranks first. Without one, reason says
// why for the emulator's header.
func (f *HTTPFront) match(r *http.Request) (*httpRoute, []RouteParam, string) {
	segments, ok := f.routeSegments(r.URL.EscapedPath())
	if !ok {
		return nil, nil, "not under /" + strings.Join(f.prefix, "/")
	}
	var best *httpRoute
	var bestParams []RouteParam
	pathMatched := false
	for i := range f.routes {
		hr := &f.routes[i]
		params, ok := hr.route.Match(segments)
		if !ok {
			continue
		}
		pathMatched = true
		if len(hr.methods) > 0 && !slices.Contains(hr.methods, strings.ToUpper(r.Method)) {
			continue
		}
		if best == nil || slices.Compare(hr.route.precedence(), best.route.precedence()) < 0 {
			best, bestParams = hr, params
		}
	}
	switch {
	case best != nil:
		return best, bestParams, ""
	case pathMatched:
		return nil, nil, "method " + r.Method + " not allowed on this route (the host answers 404, not 405)"
	}
	return nil, nil, "no function's route matches"
}

// routeSegments strips the route prefix and decodes each segment.
func (f *HTTPFront) routeSegments(escaped string) ([]string, bool) {
	parts := strings.Split(strings.Trim(escaped, "/"), "/")
	if len(parts) == 1 && parts[0] == "" {
		parts = nil
	}
	if len(parts) < len(f.prefix) {
		return nil, false
	}
	for i, p := range f.prefix {
		if !strings.EqualFold(parts[i], p) {
			return nil, false
		}
	}
	parts = parts[len(f.prefix):]
	for i, p := range parts {
		u, err := url.PathUnescape(p)
		if err != nil {
			return nil, false
		}
		parts[i] = u
	}
	return parts, true
}

// keyName finds the function key the caller presented (x-functions-key
// first, then the code query parameter, as the host's
// AuthenticationLevelHandler does) among the app's keys and returns its
// name; ok is false when the caller presented none of them. Every key is
// compared, so the time taken does not tell which one came close.
func (f *HTTPFront) keyName(r *http.Request) (name string, ok bool) {
	key := r.Header.Get("x-functions-key")
	if key == "" {
		for _, p := range parseQuery(r.URL.RawQuery) {
			if strings.EqualFold(p.name, "code") {
				key = p.values[0]
				break
			}
		}
	}
	if key == "" {
		return "", false
	}
	for n, v := range f.opts.FunctionKeys {
		if subtle.ConstantTimeCompare([]byte(key), []byte(v)) == 1 {
			name, ok = n, true
		}
	}
	return name, ok
}

// displayURL is the request URL as the host prints it: scheme, Host header,
// path and query string.
func displayURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u := scheme + "://" + r.Host + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	return u
}

func (r *Route) hasParams() bool {
	return slices.ContainsFunc(r.segments, func(s routeSegment) bool { return s.literal == "" })
}

// ListenHandler serves h (an HTTPFront, or a balancer in front of several
// instances' fronts) on addr until ctx ends. It returns the base URL
// callers use once the listener is open, and wait, which returns after the
// server has shut down (in-flight callers get shutdownGrace to finish).
func ListenHandler(ctx context.Context, addr string, h http.Handler) (baseURL string, wait func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("HTTP listener on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stopped := make(chan error, 1)
	go func() {
		var err error
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
			err = srv.Shutdown(sctx)
			cancel()
			<-served
		case err = <-served:
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		stopped <- err
	}()
	return "http://" + ln.Addr().String(), func() error { return <-stopped }, nil
}

// shutdownGrace is how long Listen lets in-flight callers finish.
const shutdownGrace = 5 * time.Second
