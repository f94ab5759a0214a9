package hostemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxAnswerBytes bounds one handler answer held in memory.
const maxAnswerBytes = 64 << 20

// Answer is what the host made of the handler's HTTP answer.
type Answer struct {
	Status int
	// Failure is empty when the invocation succeeded; otherwise it says why
	// the host failed it (the message is then abandoned).
	Failure string
	// Protocol marks a failed 2xx answer: the handler broke the wire
	// contract (content type, empty, null or non-object body).
	Protocol    bool
	Outputs     map[string]json.RawMessage
	Logs        []string
	ReturnValue json.RawMessage
}

// OK reports whether the invocation succeeded.
func (a Answer) OK() bool { return a.Failure == "" }

func failed(status int, format string, args ...any) Answer {
	return Answer{Status: status, Failure: fmt.Sprintf(format, args...)}
}

func protocolFailure(status int, format string, args ...any) Answer {
	a := failed(status, format, args...)
	a.Protocol = true
	return a
}

// readAnswer applies the host's rules (docs/host-wire-format.md §2.2): a non-2xx status fails
// the invocation; a 2xx needs Content-Type application/json (or text/json)
// and a JSON object, read like HttpScriptInvocationResult.
func readAnswer(resp *http.Response) Answer {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	status := resp.StatusCode
	if status < 200 || status > 299 {
		return failed(status, "the handler answered %d %s", status, http.StatusText(status))
	}
	if err != nil {
		return failed(status, "reading the answer: %v", err)
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt != "application/json" && mt != "text/json" {
		if ct == "" {
			ct = "none"
		}
		return protocolFailure(status, "UnsupportedMediaType: the answer's Content-Type is %s, the host reads only application/json (Go sniffs JSON as text/plain unless the header is set)", ct)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || string(body) == "null" {
		// The real host gets a null result and never completes the
		// invocation: it hangs until functionTimeout, then fails it. The
		// emulator fails it at once; the settlement is the same.
		return protocolFailure(status, "the answer body is empty or null; the host would wait for functionTimeout, then fail the invocation")
	}
	if !json.Valid(body) {
		return protocolFailure(status, "Invalid HttpResponseMessage: the answer is not JSON: %s", truncate(string(body), 200))
	}
	if body[0] != '{' {
		return protocolFailure(status, "Invalid HttpResponseMessage: the answer is JSON but not an object: %s", truncate(string(body), 200))
	}
	// Newtonsoft matches property names in any case; so does encoding/json.
	var res struct {
		Outputs     map[string]json.RawMessage
		Logs        []json.RawMessage
		ReturnValue json.RawMessage
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return protocolFailure(status, "Invalid HttpResponseMessage: %v", err)
	}
	a := Answer{Status: status, Outputs: res.Outputs, ReturnValue: res.ReturnValue}
	for _, l := range res.Logs {
		var s string
		if json.Unmarshal(l, &s) != nil {
			s = string(l)
		}
		a.Logs = append(a.Logs, s)
	}
	return a
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
