// Package localstack reads the local stack for Functions Core Tools (local/compose.yaml and the
// Service Bus emulator's local/servicebus-config.json) and checks it offline against the
// function app: it cannot start the containers, only prove that the files parse and agree.
package localstack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
	"github.com/ordersink/orders-consumer/tools/bicepcheck/isoduration"
)

// The files, relative to the app root.
const (
	ComposeFile = "local/compose.yaml"
	ConfigFile  = "local/servicebus-config.json"
	StackScript = "local/stack.sh"
	// EmulatorHealth is the Service Bus emulator's health endpoint (its HTTP port for
	// health checks and management, 5300 by default): it answers once the entities of
	// ConfigFile exist, which the AMQP port's opening does not mean.
	EmulatorHealth     = "http://127.0.0.1:5300/health"
	emulatorHealthPort = "5300"
	// ConfigMount is where the Service Bus emulator reads its configuration.
	ConfigMount = "/ServiceBus_Emulator/ConfigFiles/Config.json"
)

// Stack is the parsed local stack.
type Stack struct {
	Compose  Compose
	Emulator EmulatorConfig
	Script   string // local/stack.sh, which starts the stack and waits for it
}

// Compose is the part of a compose file the checks read.
type Compose struct {
	Services map[string]Service `yaml:"services"`
}

// Service is one compose service.
type Service struct {
	Image   string   `yaml:"image"`
	Ports   []string `yaml:"ports"`
	Volumes []string `yaml:"volumes"`
}

// EmulatorConfig is the Service Bus emulator's Config.json (its published schema:
// Azure/azure-service-bus-emulator-installer, ServiceBus-Emulator/Schema/Config-schema.json).
type EmulatorConfig struct {
	UserConfig struct {
		Namespaces []struct {
			Name   string  `json:"Name"`
			Queues []Queue `json:"Queues"`
			Topics []Topic `json:"Topics"`
		} `json:"Namespaces"`
	} `json:"UserConfig"`
}

// Queue is one emulator queue.
type Queue struct {
	Name       string          `json:"Name"`
	Properties QueueProperties `json:"Properties"`
}

// QueueProperties are the queue settings the emulator supports.
type QueueProperties struct {
	DeadLetteringOnMessageExpiration    bool   `json:"DeadLetteringOnMessageExpiration"`
	DefaultMessageTimeToLive            string `json:"DefaultMessageTimeToLive"`
	DuplicateDetectionHistoryTimeWindow string `json:"DuplicateDetectionHistoryTimeWindow"`
	LockDuration                        string `json:"LockDuration"`
	MaxDeliveryCount                    int    `json:"MaxDeliveryCount"`
	RequiresDuplicateDetection          bool   `json:"RequiresDuplicateDetection"`
	RequiresSession                     bool   `json:"RequiresSession"`
}

// Topic is one emulator topic with its subscriptions.
type Topic struct {
	Name          string `json:"Name"`
	Subscriptions []struct {
		Name string `json:"Name"`
	} `json:"Subscriptions"`
}

// Load parses both files under root.
func Load(root string) (*Stack, error) {
	var s Stack
	data, err := os.ReadFile(filepath.Join(root, ComposeFile))
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &s.Compose); err != nil {
		return nil, fmt.Errorf("%s does not parse: %w", ComposeFile, err)
	}
	script, err := os.ReadFile(filepath.Join(root, StackScript))
	if err != nil {
		return nil, err
	}
	s.Script = string(script)
	data, err = os.ReadFile(filepath.Join(root, ConfigFile))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&s.Emulator); err != nil {
		return nil, fmt.Errorf("%s does not parse: %w", ConfigFile, err)
	}
	return &s, nil
}

// Queue returns the emulator queue with that name.
func (s *Stack) Queue(name string) (Queue, bool) {
	for _, ns := range s.Emulator.UserConfig.Namespaces {
		for _, q := range ns.Queues {
			if q.Name == name {
				return q, true
			}
		}
	}
	return Queue{}, false
}

// HasTopic reports whether the emulator declares the topic.
func (s *Stack) HasTopic(name string) bool { _, ok := s.topic(name); return ok }

func (s *Stack) topic(name string) (Topic, bool) {
	for _, ns := range s.Emulator.UserConfig.Namespaces {
		for _, t := range ns.Topics {
			if t.Name == name {
				return t, true
			}
		}
	}
	return Topic{}, false
}

// Check returns what makes the stack unusable for the app: a missing service, a port open
// beyond loopback, the emulator configuration not mounted, an entity a function.json binding
// uses but the emulator lacks, a topic without a subscription (it would drop every event).
func Check(s *Stack, app *appconfig.App) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, want := range []struct{ image, why string }{
		{"azure-storage/azurite", "AzureWebJobsStorage=UseDevelopmentStorage=true"},
		{"azure-messaging/servicebus-emulator", "the Service Bus triggers and outputs"},
		{"mssql/server", "the Service Bus emulator keeps its state in SQL Server"},
		{"cosmosdb/linux/azure-cosmos-emulator", "the handler and the Cosmos DB trigger"},
	} {
		if _, ok := s.service(want.image); !ok {
			add("%s: no service runs %s, needed for %s", ComposeFile, want.image, want.why)
		}
	}
	for _, name := range sortedServices(s.Compose.Services) {
		for _, p := range s.Compose.Services[name].Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				add("%s: service %s publishes %q beyond 127.0.0.1", ComposeFile, name, p)
			}
		}
	}
	if sb, ok := s.service("azure-messaging/servicebus-emulator"); ok && !mounts(sb, ConfigFile, ConfigMount) {
		add("%s: the Service Bus emulator does not mount %s at %s", ComposeFile, filepath.Base(ConfigFile), ConfigMount)
	}
	out = append(out, s.waitsOnEmulatorHealth()...)
	if ns := s.Emulator.UserConfig.Namespaces; len(ns) != 1 || ns[0].Name != "sbemulatorns" {
		add("%s: the emulator takes exactly one namespace, named sbemulatorns", ConfigFile)
	}
	out = append(out, s.limits()...)
	out = append(out, s.settingsReachStack(app)...)
	for _, fn := range app.Functions {
		for _, b := range fn.Bindings {
			if b.Service() != "servicebus" {
				continue
			}
			if _, ok := s.Queue(b.QueueName); b.QueueName != "" && !ok {
				add("%s: %s binding %s uses queue %q, which the emulator does not declare", ConfigFile, fn.Name, b.Name, b.QueueName)
			}
			if t, ok := s.topic(b.TopicName); b.TopicName != "" && (!ok || len(t.Subscriptions) == 0) {
				add("%s: %s binding %s sends to topic %q, which the emulator lacks or which has no subscription (a topic without one drops every message)", ConfigFile, fn.Name, b.Name, b.TopicName)
			}
		}
	}
	return out
}

// The emulator's bounds (its Config-schema.json): it refuses a configuration outside them.
var emulatorBounds = []struct {
	name     string
	value    func(QueueProperties) string
	min, max int
}{
	{"DefaultMessageTimeToLive", func(p QueueProperties) string { return p.DefaultMessageTimeToLive }, 5 * 60, 3600},
	{"DuplicateDetectionHistoryTimeWindow", func(p QueueProperties) string { return p.DuplicateDetectionHistoryTimeWindow }, 5, 5 * 60},
	{"LockDuration", func(p QueueProperties) string { return p.LockDuration }, 5, 5 * 60},
}

func (s *Stack) limits() []string {
	var out []string
	for _, ns := range s.Emulator.UserConfig.Namespaces {
		for _, q := range ns.Queues {
			for _, b := range emulatorBounds {
				v := b.value(q.Properties)
				if secs, ok := isoduration.Seconds(v); !ok || secs < b.min || secs > b.max {
					out = append(out, fmt.Sprintf("%s: queue %s: %s %q is outside the emulator's %ds..%ds", ConfigFile, q.Name, b.name, v, b.min, b.max))
				}
			}
			if n := q.Properties.MaxDeliveryCount; n < 1 || n > 10 {
				out = append(out, fmt.Sprintf("%s: queue %s: MaxDeliveryCount %d is outside the emulator's 1..10", ConfigFile, q.Name, n))
			}
		}
	}
	return out
}

// settingsReachStack: every local endpoint local.settings.json names must be a port the
// stack publishes (Azurite for UseDevelopmentStorage=true, AMQP 5672 for the Service Bus
// emulator, the Cosmos DB emulator's gateway).
func (s *Stack) settingsReachStack(app *appconfig.App) []string {
	if app.LocalSettings == nil {
		return nil
	}
	want := map[string]string{}
	for name, v := range app.LocalSettings.Values {
		switch {
		case v == "UseDevelopmentStorage=true":
			for _, p := range []string{"10000", "10001", "10002"} {
				want[p] = name
			}
		case strings.Contains(v, "UseDevelopmentEmulator=true"):
			want["5672"] = name
		default:
			if port := loopbackPort(v); port != "" {
				want[port] = name
			}
		}
	}
	published := map[string]bool{}
	for _, svc := range s.Compose.Services {
		for _, p := range svc.Ports {
			for _, port := range hostPorts(p) {
				published[port] = true
			}
		}
	}
	var out []string
	for _, port := range sortedStrings(want) {
		if !published[port] {
			out = append(out, fmt.Sprintf("local.settings.json: %s needs 127.0.0.1:%s, which %s does not publish", want[port], port, ComposeFile))
		}
	}
	return out
}

var loopbackURL = regexp.MustCompile(`https?://(?:localhost|127\.0\.0\.1):(\d+)`)

func loopbackPort(v string) string {
	if m := loopbackURL.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return ""
}

// hostPorts expands "127.0.0.1:10250-10255:10250-10255" to the host ports 10250..10255.
func hostPorts(spec string) []string {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 {
		return nil
	}
	host := parts[len(parts)-2]
	lo, hi, found := strings.Cut(host, "-")
	if !found {
		return []string{host}
	}
	a, errA := strconv.Atoi(lo)
	b, errB := strconv.Atoi(hi)
	if errA != nil || errB != nil || b < a || b-a > 1000 {
		return nil
	}
	var out []string
	for p := a; p <= b; p++ {
		out = append(out, strconv.Itoa(p))
	}
	return out
}

func sortedStrings(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *Stack) service(image string) (Service, bool) {
	for _, name := range sortedServices(s.Compose.Services) {
		if svc := s.Compose.Services[name]; strings.Contains(svc.Image, image) {
			return svc, true
		}
	}
	return Service{}, false
}

func mounts(svc Service, file, target string) bool {
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && filepath.Base(parts[0]) == filepath.Base(file) && parts[1] == target {
			return true
		}
	}
	return false
}

func sortedServices(m map[string]Service) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// waitsOnEmulatorHealth: func start must not begin before the emulator has created the queues.
// Its AMQP port opens before that, so stack.sh waits on the health endpoint, which compose must
// publish.
func (s *Stack) waitsOnEmulatorHealth() []string {
	var out []string
	if sb, ok := s.service("azure-messaging/servicebus-emulator"); ok && !slices.ContainsFunc(sb.Ports, func(p string) bool {
		return slices.Contains(hostPorts(p), emulatorHealthPort) && strings.HasSuffix(p, ":"+emulatorHealthPort)
	}) {
		out = append(out, fmt.Sprintf("%s: the Service Bus emulator does not publish its health port 127.0.0.1:%s", ComposeFile, emulatorHealthPort))
	}
	waits := false
	for _, line := range strings.Split(s.Script, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "wait_for") {
			continue
		}
		if strings.Contains(line, "/dev/tcp/") && strings.Contains(line, "5672") {
			out = append(out, fmt.Sprintf("%s waits on the emulator's AMQP port 5672, which opens before the queues exist: wait on %s", StackScript, EmulatorHealth))
		}
		waits = waits || strings.Contains(line, EmulatorHealth)
	}
	if !waits {
		out = append(out, fmt.Sprintf("%s does not wait_for the Service Bus emulator's health endpoint %s before func start", StackScript, EmulatorHealth))
	}
	return out
}
