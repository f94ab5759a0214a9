package funcapp

import (
	"sort"
	"strings"
)

// Function is one function folder.
type Function struct {
	Name     string // the folder name: the function name and the URL path the host posts to
	Path     string // of its function.json
	Disabled bool   // "disabled": true in function.json
	Bindings []Binding
}

// Binding is one entry of function.json "bindings". Raw keeps every property
// as written, for checks on properties this struct does not name.
type Binding struct {
	Name                           string `json:"name"`
	Type                           string `json:"type"`
	Direction                      string `json:"direction"`
	Connection                     string `json:"connection"`
	QueueName                      string `json:"queueName"`
	TopicName                      string `json:"topicName"`
	DatabaseName                   string `json:"databaseName"`
	ContainerName                  string `json:"containerName"`
	LeaseContainerName             string `json:"leaseContainerName"`
	Cardinality                    string `json:"cardinality"`
	DataType                       string `json:"dataType"`
	AutoCompleteMessages           *bool  `json:"autoCompleteMessages"`
	CreateLeaseContainerIfNotExist *bool  `json:"createLeaseContainerIfNotExists"`
	// Route, Methods and AuthLevel are an httpTrigger's: the route template
	// under the route prefix (default: the function name), the methods it
	// answers (none: all) and anonymous, function or admin.
	Route     string         `json:"route"`
	Methods   []string       `json:"methods"`
	AuthLevel string         `json:"authLevel"`
	Raw       map[string]any `json:"-"`
}

// Trigger returns the function's trigger binding, or nil.
func (f *Function) Trigger() *Binding {
	for i := range f.Bindings {
		if f.Bindings[i].IsTrigger() {
			return &f.Bindings[i]
		}
	}
	return nil
}

// Binding returns the binding with the given name, or nil.
func (f *Function) Binding(name string) *Binding {
	for i := range f.Bindings {
		if f.Bindings[i].Name == name {
			return &f.Bindings[i]
		}
	}
	return nil
}

// Outputs returns the output bindings ("direction": "out").
func (f *Function) Outputs() []Binding {
	var out []Binding
	for _, b := range f.Bindings {
		if strings.EqualFold(b.Direction, "out") {
			out = append(out, b)
		}
	}
	return out
}

// ServiceBusQueue returns the queue a serviceBusTrigger function reads, or "".
func (f *Function) ServiceBusQueue() string {
	if t := f.Trigger(); t != nil && strings.EqualFold(t.Type, "serviceBusTrigger") {
		return t.QueueName
	}
	return ""
}

// IsTrigger reports whether the binding is the function's trigger.
func (b Binding) IsTrigger() bool { return strings.HasSuffix(strings.ToLower(b.Type), "trigger") }

// Many reports whether the trigger delivers batches ("cardinality": "many").
func (b Binding) Many() bool { return strings.EqualFold(b.Cardinality, "many") }

// Binary reports whether the binding carries bytes ("dataType": "binary").
func (b Binding) Binary() bool { return strings.EqualFold(b.DataType, "binary") }

// Entity is the queue or topic a Service Bus binding names.
func (b Binding) Entity() string {
	if b.QueueName != "" {
		return b.QueueName
	}
	return b.TopicName
}

// Service is the Azure service a binding talks to: "servicebus", "cosmosdb"
// or "" for others.
func (b Binding) Service() string {
	switch strings.TrimSuffix(strings.ToLower(b.Type), "trigger") {
	case "servicebus":
		return "servicebus"
	case "cosmosdb":
		return "cosmosdb"
	}
	return ""
}

// SettingReferences returns the app setting names a binding reads through
// %NAME% expressions, sorted.
func (b Binding) SettingReferences() []string {
	var names []string
	for _, v := range b.Raw {
		s, ok := v.(string)
		if !ok {
			continue
		}
		for {
			start := strings.Index(s, "%")
			if start < 0 {
				break
			}
			end := strings.Index(s[start+1:], "%")
			if end < 0 {
				break
			}
			if end > 0 { // "%%" names no setting
				names = append(names, s[start+1:start+1+end])
			}
			s = s[start+1+end+1:]
		}
	}
	sort.Strings(names)
	return names
}
