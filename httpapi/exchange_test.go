package httpapi

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
)

// A problem's instance is the path as the caller wrote it, escaped (RFC
// 3986): a URI reference, whatever the orderId holds.
func TestProblemInstanceIsTheEscapedPath(t *testing.T) {
	d := startAPI(t)
	for _, tc := range []struct{ id, want string }{
		{"ORD 1", "/api/orders/ORD%201"},
		{"a?b", "/api/orders/a%3Fb"},
		{"a#b", "/api/orders/a%23b"},
		{"caf\u00e9", "/api/orders/caf%C3%A9"},
		{"a%b", "/api/orders/a%25b"},
	} {
		p := wantProblem(t, d.get(t, getCall(tc.id)), http.StatusNotFound, "order-not-found")
		if p.Instance != tc.want {
			t.Errorf("orderId %q: instance %q, want %q", tc.id, p.Instance, tc.want)
		}
		if u, err := url.Parse(p.Instance); err != nil || u.Path != ordersPath+"/"+tc.id || u.RawQuery != "" || u.Fragment != "" {
			t.Errorf("orderId %q: instance %q is not the escaped path (%+v, %v)", tc.id, p.Instance, u, err)
		}
	}
}

// A caller's value in a line of the host's Logs is quoted when it could end
// the line or pass for another field: one invocation, one line, whatever the
// orderId, the MessageId or the description holds.
func TestCallerValuesCannotForgeALogLine(t *testing.T) {
	d := startAPI(t)
	forged := "ORD-1\nSubmitOrder: 201 created ORD-FAKE"
	id, body := handlertest.UniqueOrder(t)
	withForged := bytes.Replace(body, []byte(`"orderId":"`+id+`"`), []byte(`"orderId":"ORD-1\nSubmitOrder: 201 created ORD-FAKE"`), 1)
	for name, a := range map[string]callerAnswer{
		"SubmitOrder": d.submit(t, "forge-"+id, withForged),
		"GetOrder":    d.get(t, getCall(forged)),
	} {
		if len(a.Logs) != 1 || strings.Contains(a.Logs[0], "\n") || !strings.Contains(a.Logs[0], `"ORD-1\nSubmitOrder: 201 created ORD-FAKE"`) {
			t.Errorf("%s: host log lines %q; want one line with the orderId quoted", name, a.Logs)
		}
	}
	q := d.Invoke(t, handler.FunctionProcessOrder, hostInvocation(withForged, "MSG 1\nProcessOrder: created X", 1))
	if len(q.Logs) != 1 || strings.Contains(q.Logs[0], "\n") || !strings.Contains(q.Logs[0], `"ORD-1\nSubmitOrder: 201 created ORD-FAKE"`) {
		t.Errorf("ProcessOrder: host log lines %q; want one line with the orderId quoted", q.Logs)
	}
	for _, tc := range []struct{ in, want string }{
		{"ORD-1", "ORD-1"},
		{"", `""`},
		{"ORD 1", `"ORD 1"`},
		{`a"b`, `"a\"b"`},
		{"a\u2028b", `"a\u2028b"`},
		{"caf\u00e9", "caf\u00e9"},
	} {
		if got := handler.LogValue(tc.in); got != tc.want {
			t.Errorf("LogValue(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// GET takes no body: a small one is ignored, one that makes the invocation
// too large to read is refused with the declared 413 request-too-large.
func TestGetOrderBody(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	d.wantOrder(t, d.submit(t, "k-"+id, body), http.StatusCreated, id)
	c := getCall(id)
	c.body = []byte(`{"ignored":true}`)
	d.wantOrder(t, d.get(t, c), http.StatusOK, id)
	c.body = bytes.Repeat([]byte("x"), maxHTTPInvocationBytes)
	p := wantProblem(t, d.get(t, c), http.StatusRequestEntityTooLarge, "request-too-large")
	if !strings.Contains(p.Detail, "GET takes no body") {
		t.Errorf("detail %q", p.Detail)
	}
}
