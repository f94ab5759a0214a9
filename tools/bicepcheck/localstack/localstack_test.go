package localstack

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
)

var repoRoot = filepath.Join("..", "..", "..")

func load(t *testing.T) (*Stack, *appconfig.App) {
	t.Helper()
	s, err := Load(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	app, err := appconfig.Load(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	return s, app
}

func TestRepositoryStackServesTheApp(t *testing.T) {
	s, app := load(t)
	for _, p := range Check(s, app) {
		t.Error(p)
	}
	if len(s.Compose.Services) < 4 {
		t.Errorf("read %d compose services, want 4; the reader lost track", len(s.Compose.Services))
	}
}

func TestCheckCatchesEachBreak(t *testing.T) {
	cases := []struct {
		name, want string
		mutate     func(s *Stack)
	}{
		{"no Service Bus emulator", "servicebus-emulator", func(s *Stack) { delete(s.Compose.Services, "servicebus") }},
		{"no Azurite", "azurite", func(s *Stack) { delete(s.Compose.Services, "azurite") }},
		{"port open to the network", "beyond 127.0.0.1", func(s *Stack) {
			svc := s.Compose.Services["cosmos"]
			svc.Ports = append(svc.Ports, "8081:8081")
			s.Compose.Services["cosmos"] = svc
		}},
		{"config not mounted", "does not mount", func(s *Stack) {
			svc := s.Compose.Services["servicebus"]
			svc.Volumes = nil
			s.Compose.Services["servicebus"] = svc
		}},
		{"parking queue missing", `queue "orders-deadletter"`, func(s *Stack) {
			ns := &s.Emulator.UserConfig.Namespaces[0]
			ns.Queues = ns.Queues[:1]
		}},
		{"topic without subscription", `topic "order-events"`, func(s *Stack) {
			s.Emulator.UserConfig.Namespaces[0].Topics[0].Subscriptions = nil
		}},
		{"Bicep's TTL copied into the emulator", "DefaultMessageTimeToLive \"P14D\" is outside", func(s *Stack) {
			s.Emulator.UserConfig.Namespaces[0].Queues[0].Properties.DefaultMessageTimeToLive = "P14D"
		}},
		{"Bicep's window copied into the emulator", "DuplicateDetectionHistoryTimeWindow \"PT10M\" is outside", func(s *Stack) {
			s.Emulator.UserConfig.Namespaces[0].Queues[0].Properties.DuplicateDetectionHistoryTimeWindow = "PT10M"
		}},
		{"Cosmos emulator moved to another port", "needs 127.0.0.1:8081", func(s *Stack) {
			svc := s.Compose.Services["cosmos"]
			svc.Ports = []string{"127.0.0.1:18081:8081", "127.0.0.1:10250-10255:10250-10255"}
			s.Compose.Services["cosmos"] = svc
		}},
		{"Azurite's table port not published", "needs 127.0.0.1:10002", func(s *Stack) {
			svc := s.Compose.Services["azurite"]
			svc.Ports = svc.Ports[:2]
			s.Compose.Services["azurite"] = svc
		}},
		{"wrong namespace name", "sbemulatorns", func(s *Stack) { s.Emulator.UserConfig.Namespaces[0].Name = "orders" }},
		{"health port not published", "does not publish its health port 127.0.0.1:5300", func(s *Stack) {
			svc := s.Compose.Services["servicebus"]
			svc.Ports = []string{"127.0.0.1:5672:5672"}
			s.Compose.Services["servicebus"] = svc
		}},
		{"stack.sh waits on the AMQP port", "waits on the emulator's AMQP port 5672", func(s *Stack) {
			s.Script = strings.Replace(s.Script, "curl -sf -o /dev/null "+EmulatorHealth, `bash -c "exec 3<>/dev/tcp/127.0.0.1/5672"`, 1)
		}},
		{"stack.sh does not wait for the emulator", "does not wait_for the Service Bus emulator's health endpoint", func(s *Stack) {
			s.Script = strings.ReplaceAll(s.Script, EmulatorHealth, "http://127.0.0.1:5300/")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, app := load(t)
			tc.mutate(s)
			problems := Check(s, app)
			for _, p := range problems {
				if strings.Contains(p, tc.want) {
					return
				}
			}
			t.Errorf("no problem containing %q; got %v", tc.want, problems)
		})
	}
}

func TestLoadRejectsABrokenComposeFile(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "broken-compose"))
	if err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Fatalf("Load = %v, want a parse error", err)
	}
}
