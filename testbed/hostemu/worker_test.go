package hostemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a custom handler: with HOSTEMU_FAKE_HANDLER set
// it serves like one instead of running the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("HOSTEMU_FAKE_HANDLER"); mode != "" {
		fakeHandler(mode)
		return
	}
	os.Exit(cosmosDB.Main(m))
}

func fakeHandler(mode string) {
	switch mode {
	case "crash":
		os.Exit(3)
	case "never":
		time.Sleep(time.Hour)
	case "slow":
		time.Sleep(200 * time.Millisecond)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("FUNCTIONS_CUSTOMHANDLER_PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) })
	mux.HandleFunc("GET /env", func(w http.ResponseWriter, r *http.Request) {
		env := map[string]any{"pid": os.Getpid(), "args": os.Args[1:]}
		for _, kv := range os.Environ() {
			if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "FUNCTIONS_") || strings.HasPrefix(k, "HOSTEMU_") {
				env[k] = v
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(env)
	})
	mux.HandleFunc("POST /ProcessOrder", fakeFunction)
	mux.HandleFunc("POST /PublishOrderEvents", echoDocuments)
	_ = http.Serve(ln, mux)
}

func startFake(t *testing.T, mode string, cfg WorkerConfig) *Worker {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Path, cfg.Dir, cfg.AppRoot = exe, t.TempDir(), "/app/root"
	cfg.Env = append(os.Environ(), "HOSTEMU_FAKE_HANDLER="+mode, "HOSTEMU_SETTING=from-settings")
	cfg.Log = func(s string) { t.Log("host: " + s) }
	w, err := StartWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(5 * time.Second) })
	return w
}

func fakeEnv(t *testing.T, w *Worker) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	base, err := w.Endpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(base + "/env")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	return env
}

func TestWorkerStartsLikeTheHost(t *testing.T) {
	w := startFake(t, "slow", WorkerConfig{Args: []string{"--flag", "x"}})
	env := fakeEnv(t, w)
	port := strings.TrimPrefix(w.URL(), "http://127.0.0.1:")
	want := map[string]any{
		"FUNCTIONS_CUSTOMHANDLER_PORT": port, "FUNCTIONS_HTTPWORKER_PORT": port,
		"FUNCTIONS_APP_ROOT_PATH": "/app/root", "HOSTEMU_SETTING": "from-settings",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %v, want %v", k, env[k], v)
		}
	}
	if id := env["FUNCTIONS_CUSTOMHANDLER_WORKER_ID"]; id == nil || id != env["FUNCTIONS_HTTPWORKER_ID"] {
		t.Errorf("worker ids %v / %v, want one GUID in both", id, env["FUNCTIONS_HTTPWORKER_ID"])
	}
	if fmt.Sprint(env["args"]) != "[--flag x]" {
		t.Errorf("args %v", env["args"])
	}
}

func TestWorkerRestartsAfterKill(t *testing.T) {
	w := startFake(t, "ok", WorkerConfig{})
	pid := fakeEnv(t, w)["pid"]
	for i := range 2 {
		if err := w.Kill(); err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
		// Kill ends the ready period: fakeEnv waits for the next process.
		next := fakeEnv(t, w)["pid"]
		if next == nil || next == pid {
			t.Fatalf("kill %d: pid %v answers, want a new handler process (was %v)", i, next, pid)
		}
		pid = next
	}
	s := w.Stats()
	if s.Kills != 2 || s.Starts != 3 || s.UnexpectedExits != 0 || w.Err() != nil {
		t.Errorf("stats %+v err %v, want 2 kills, 3 starts, no unexpected exit", s, w.Err())
	}
}

func TestWorkerGivesUp(t *testing.T) {
	tests := []struct {
		mode string
		cfg  WorkerConfig
		want string
	}{
		{"crash", WorkerConfig{}, "exited 3 times"},
		{"never", WorkerConfig{InitializationTimeout: 300 * time.Millisecond, MaxStartErrors: 1}, "exited 1 times"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			w := startFake(t, tt.mode, tt.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := w.Endpoint(ctx)
			if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Endpoint: %v, want the host to give up (%s)", err, tt.want)
			}
		})
	}
}
