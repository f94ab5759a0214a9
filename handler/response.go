package handler

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"unicode"
)

// invocationResult is the answer the host expects. Outputs is keyed by output
// binding name; the host binds it only on a 2xx answer.
type invocationResult struct {
	Outputs     map[string]any `json:"Outputs"`
	Logs        []string       `json:"Logs"`
	ReturnValue any            `json:"ReturnValue"`
}

func newResult() *invocationResult {
	return &invocationResult{Outputs: map[string]any{}, Logs: []string{}}
}

// encode writes v as JSON with the status. The host fails any 2xx answer that
// is not application/json, and Go would sniff a JSON body as text/plain.
func encode(w http.ResponseWriter, log *slog.Logger, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only values that cannot fail to marshal are passed in; if that
		// ever breaks, fail the invocation so the message is redelivered.
		log.Error("encode response", "err", err)
		status, b = http.StatusInternalServerError, []byte(`{"Outputs":{},"Logs":[],"ReturnValue":null}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// LogValue is a caller's value (an orderId, a MessageId) as a line of the
// host's Logs shows it: as sent when it is printable and holds no space or
// quote, else Go-quoted, so that no value can end the line, start one of
// its own or pass for another field.
func LogValue(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) || r == '"' || r == '\\' {
			return strconv.Quote(s)
		}
	}
	return s
}

// logText is a description that may quote a caller's value: as is unless it
// holds a character that is not printable (a line break), then Go-quoted.
func logText(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}
