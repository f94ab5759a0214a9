package localrun

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serveApp is the repository's host.json and ProcessOrder beside an HTTP
// function the handler does not implement: the caller gets the host's 500
// for a handler that answered 404.
func serveApp(t *testing.T, root string) string {
	t.Helper()
	return writeTree(t, map[string]string{
		"host.json":                  mustRead(t, filepath.Join(root, "host.json")),
		"ProcessOrder/function.json": mustRead(t, filepath.Join(root, "ProcessOrder", "function.json")),
		"Ping/function.json": `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"function","methods":["post"],"route":"ping/{id}"},
			{"type":"http","direction":"out","name":"res"}]}`,
	})
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServeListensUntilTheContextEnds(t *testing.T) {
	root, handler, environ := endToEnd(t)
	stdoutR, stdoutW := io.Pipe()
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		defer stdoutW.Close()
		served <- Serve(ctx, Options{AppRoot: serveApp(t, root), Executable: handler, OutDir: t.TempDir(), Environ: environ,
			HTTPAddr: "127.0.0.1:0", FunctionKeys: map[string]string{"default": "dev-key"}, Log: &log}, stdoutW)
	}()
	lines := bufio.NewScanner(stdoutR)
	var base, curl string
	for lines.Scan() && curl == "" {
		if m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+);`).FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
		if strings.Contains(lines.Text(), "curl") {
			curl = strings.TrimSpace(lines.Text())
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdoutR) }()
	if want := "curl -i -X POST -H 'x-functions-key: dev-key' -H 'Idempotency-Key: demo-1' -H 'Content-Type: application/json' --data '{}' " + base + "/api/ping/id"; curl != want {
		t.Fatalf("curl example %q, want %q", curl, want)
	}
	for key, want := range map[string]int{"": http.StatusUnauthorized, "dev-key": http.StatusInternalServerError} {
		req, _ := http.NewRequest("POST", base+"/api/ping/1", strings.NewReader("{}"))
		req.Header.Set("x-functions-key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("key %q: status %d, want %d", key, resp.StatusCode, want)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "the handler answered 404 Not Found") {
		t.Errorf("log %s: want the failed invocation explained", log.String())
	}
	if _, err := http.Get(base + "/api/ping/1"); err == nil {
		t.Error("still listening after Serve returned")
	}
}
